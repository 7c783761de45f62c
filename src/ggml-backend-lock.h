#pragma once

//
// ggml-backend-lock.h: one lock per backend object (stream), taken by the
// wrappers of ggml-backend.c around every call that uses the stream, so that
// threads sharing a backend take turns instead of corrupting its state. Not
// installed.
//
// struct ggml_backend has upstream's layout (modules allocate it), so the
// lock cannot live in it: locks are kept in a table keyed by the backend's
// address, made at first use and removed by ggml_backend_free. The locks are
// recursive (a backend may call the wrappers on itself while computing).
//

#include "ggml-backend-impl.h"

#include <pthread.h>

// Locks backend's stream and returns the lock, for ggml_backend_stream_unlock.
// Never fails: if no lock can be made for backend (out of memory), a lock
// shared by all such backends is used.
pthread_mutex_t * ggml_backend_stream_lock  (ggml_backend_t backend);
void              ggml_backend_stream_unlock(pthread_mutex_t * lock);

// Two streams at once, in an order that cannot deadlock with another thread
// locking the same two (a == b is allowed); locks[0..1] for the unlock.
void ggml_backend_stream_lock2  (ggml_backend_t a, ggml_backend_t b, pthread_mutex_t * locks[2]);
void ggml_backend_stream_unlock2(pthread_mutex_t * locks[2]);

// Forgets backend's lock (before the backend is freed; nobody may hold it).
void ggml_backend_stream_forget(ggml_backend_t backend);
