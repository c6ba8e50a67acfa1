/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_unregister.h - an object is about to be freed: take it out of the
 * registry that may read it from another thread (lib/telemetry's).
 *
 * The registry sits above every layer whose objects it reports
 * (lib/meson.build's layer order), so pp_pool_destroy(), pp_port_close()
 * and pp_allocator_destroy() cannot call it. Instead lib/telemetry sets
 * the hook here, in the lowest layer, the first time anything registers,
 * and those calls run pp_unregister_obj() before they free: once it
 * returns, a request that was reading the object has finished (the
 * registry's lock) and no later one finds it. Without telemetry the hook
 * is NULL and the call is a load.
 *
 * Set once per process with a release store and never cleared (the
 * registry lives as long as the process); read with an acquire load. An
 * object is registered before it is destroyed, by the same thread or one
 * the destroyer synchronised with, so the destroyer sees the hook.
 */
#ifndef PP_INTERNAL_UNREGISTER_H
#define PP_INTERNAL_UNREGISTER_H

/* Removes every registration of @obj; returns how many. */
typedef int (*pp_unregister_fn)(const void *obj);

void pp_unregister_hook_set(pp_unregister_fn fn);

/* Context: not under a lock that a registry's reader may need (it waits
 * for a request in flight, which reads the object's statistics). */
void pp_unregister_obj(const void *obj);

#endif /* PP_INTERNAL_UNREGISTER_H */
