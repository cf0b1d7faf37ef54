# C types of cyclon.py for the compiled build (Cython augmenting declarations: the .py
# file is the source). Fields read or set from Python code are public.

cimport cython
from dgdrf.runtime.actor cimport Role


cdef class Cyclon(Role):
    cdef public Py_ssize_t c
    cdef public Py_ssize_t l
    cdef public object period
    cdef public object bootstrap
    cdef public object profile
    cdef public dict view
    cdef public dict profiles
    cdef public dict _profile_born
    cdef public long long cycle
    cdef public dict _sent
    cdef public bint alone
    cdef public object _last_peer
    cdef public object rnd
    cdef public list listeners
    cdef public str me

    @cython.locals(view=dict, k=Py_ssize_t)
    cpdef object random_peer(self)
    @cython.locals(view=dict, prof=dict, cycle=cython.longlong, others=list, entries=list)
    cpdef shuffle(self)
    @cython.locals(view=dict, prof=dict, born=dict, cycle=cython.longlong, c=Py_ssize_t, replaceable=list, held=object)
    cpdef _merge(self, list entries, list sent)


@cython.locals(first=object)
cpdef object _oldest(dict view)

@cython.locals(n=Py_ssize_t, i=Py_ssize_t, j=Py_ssize_t, idx=list)
cpdef list _sample(list items, Py_ssize_t k, random)
