-- A snax file for test_snax that defines accept.twice two times.
function accept.twice() end

function accept.twice() end
