"""Calls frame_readers.check() from Python code of many shapes: each call
reads the stack with the adapter's two frame readers, and the driver counts
the calls where they differ. Prints one line per shape group and a last
line when all ran."""
import asyncio
import contextlib
import functools
import gc
import threading

import frame_readers

check = frame_readers.check


def nested(n):
    if n == 0:
        return check()
    return nested(n - 1)


# Plain calls, and stacks deeper than the 64 frames read (both truncate);
# the list comprehension is inlined into the module's frame since 3.12.
depths = [nested(n) for n in range(80)]
assert depths[0] >= 2 and depths[-1] == 64, depths
print("plain calls: depth", depths[0], "to", depths[-1])


def generator():
    yield check()
    yield nested(3)


def delegating():
    yield from generator()


async def coroutine():
    await asyncio.sleep(0)
    return check()


async def gathered():
    return await asyncio.gather(coroutine(), coroutine())


list(generator())
list(delegating())
asyncio.run(gathered())
print("generators and coroutines")


class Compared:
    def __eq__(self, other):
        check()
        return True

    __hash__ = object.__hash__

    def method(self):
        return check()

    @property
    def prop(self):
        return check()


class Meta(type):
    def __call__(cls, *args):
        check()
        return super().__call__(*args)


class Made(metaclass=Meta):
    def __init__(self):
        check()


# Python called back from C: comparisons, key functions, map, reduce.
Compared() == Compared()
Compared().method()
Compared().prop
Made()
sorted([3, 1, 2], key=lambda x: (check(), x))
list(map(lambda x: check(), range(3)))
functools.reduce(lambda a, b: check(), range(4))
print("called back from C")


def with_cell():
    # A cell variable: the frame runs MAKE_CELL before it starts.
    y = 2
    inner = lambda: y + check()
    return inner()


def decorate(f):
    @functools.wraps(f)
    def wrapper(*args):
        return f(*args)
    return wrapper


@decorate
def decorated():
    return check()


@contextlib.contextmanager
def managed():
    check()
    yield
    check()


with_cell()
decorated()
with managed():
    check()
try:
    raise ValueError("x")
except ValueError:
    check()
finally:
    check()
exec("check()")
eval("check()")
print("closures, decorators, context managers, exceptions, exec")


class Finalized:
    def __del__(self):
        check()


dropped = Finalized()
del dropped  # __del__ at once
cycle = Finalized()
cycle.self = cycle
del cycle
gc.collect()  # __del__ from the collector
print("finalizers")

worker = threading.Thread(target=nested, args=(5,))
worker.start()
worker.join()
print("another thread")
print("shapes done")
