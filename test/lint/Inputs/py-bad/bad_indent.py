# Does not parse: the body is not indented.
def step():
return 1
