#ifndef SKYNET_PROFILER_H
#define SKYNET_PROFILER_H

/*
 * Internal: skynet-src/ only. The sampling profiler's core; its public half
 * (start, stop, record, the sampler callback) is in skynet.h.
 */

/*
 * At shutdown, after the workers stopped: stop a running profile (its
 * thread is joined) and free the last profile. Main thread.
 */
void skynet_profiler_exit(void);

#endif
