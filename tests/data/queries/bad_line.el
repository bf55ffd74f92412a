1 2
2 3
three 4
