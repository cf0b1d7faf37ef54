# C types of actor.py for the compiled build (Cython augmenting declarations: the .py
# file is the source). Fields read or set from Python code are public.

cdef class Actor

cdef class Context:
    cdef public object clock
    cdef public object transport
    cdef public object reporter
    cdef public object rng


cdef class Role:
    cdef public Actor actor
    cdef dict __dict__  # roles written as ordinary classes keep their own attributes


cdef class Periodic:
    cdef object _clock
    cdef object _fire_cb
    cdef object _period
    cdef object _fn
    cdef object _handle
    cdef bint _active


cdef class Actor:
    cdef public str address
    cdef public Context ctx
    cdef public list roles
    cdef public object _tsend
    cdef public object _tframe
    cdef public dict _frame_handlers
    cdef public dict _role_handlers
    cdef public dict _own_handlers
    cdef public list _timers
    cdef dict __dict__  # subclasses (servers, users, ...) keep their own attributes

    cpdef send(self, dst, msg)
    cpdef send_frame(self, long long dst, long tag, bytes data)
