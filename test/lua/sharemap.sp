# Schema for test_sharemap (sproto slot 0).
.Pos {
	x 0 : integer
	y 1 : integer
}

.Record {
	name 0 : string
	level 1 : integer
	tags 2 : *string
	pos 3 : Pos
	alive 4 : boolean
}
