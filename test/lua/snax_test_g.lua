-- The snax_interface_g module of test_snax: clients parse snax files in
-- this table.
return { require = function() end, string = string }
