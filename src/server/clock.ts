// The monotonic clock, for the paths that read it per message or per read. The global
// `performance` is Node's lazy getter, a JavaScript call at every read of it (a
// function a fresh server compiles among its first messages), and `timeOrigin` is a
// getter too: both are read once, here.

export const perf = performance;

/** The epoch milliseconds of perf.now()'s zero. */
export const TIME_ORIGIN = perf.timeOrigin;
