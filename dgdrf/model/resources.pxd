# C types of resources.py for the compiled build (Cython augmenting declarations: the .py
# file is the source). A distributed scheduler asks a task's dominant share at every
# decision: its quotients and maximum in C doubles, which round as Python floats do.

cimport cython


@cython.locals(best=double, first=bint, r=double, cf=double, k=Py_ssize_t)
cpdef double task_dominant_share(object demand, object total) except? -1.0
