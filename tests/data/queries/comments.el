# a comment line

10 20
20 30

30 10
