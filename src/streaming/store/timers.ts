// setTimeout for store housekeeping (max_age expiry, max_inactivity).

/** Node fires a longer setTimeout after 1 ms: callers re-check and re-arm instead. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * A timer that never keeps the process alive by itself: an embedding program exits
 * when its own work is done, whatever max_age is set to.
 */
export function startTimer(delayMs: number, fire: () => void): NodeJS.Timeout {
  const timer = setTimeout(fire, Math.min(Math.max(0, Math.ceil(delayMs)), MAX_TIMER_MS));
  timer.unref();
  return timer;
}
