/**
 * Plugin code may never settle (a top-level await on nothing, a factory waiting for a server).
 * The host must not hang at boot, so every import and factory call is raced against a timer.
 * The timer stays referenced while it runs (an unsettled promise alone would let Node exit in
 * silence) and is cleared as soon as the race is decided.
 */

/** Settle with `work`, or reject with `onTimeout()` after `ms` milliseconds. */
export function raceTimeout<T>(work: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  if (!Number.isFinite(ms) || ms <= 0) return work;
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(onTimeout()), ms);
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
