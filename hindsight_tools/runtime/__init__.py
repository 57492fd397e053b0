"""The sans-I/O core's runtime: plans of SQL statements and the programs that sequence them."""
