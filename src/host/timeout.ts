/**
 * Plugin code may never settle (a top-level await on nothing, a factory waiting for a server).
 * The host must not hang at boot, so every import and factory call is raced against a deadline.
 *
 * Written by hand rather than with a timer per race (or a library doing that): a boot races a
 * few hundred imports that settle in microseconds, and under Bun a `setTimeout` + `clearTimeout`
 * pair per import was a visible part of the load in `npm run bench`. All pending races share ONE timer, armed for
 * the earliest deadline: it stays referenced while any race is pending (an unsettled promise
 * alone would let Node exit in silence) and is cleared as soon as none is, so it never keeps a
 * finished process alive.
 */

interface Pending {
  deadline: number;
  expire: () => void;
}

const pending = new Set<Pending>();
let timer: ReturnType<typeof setTimeout> | undefined;
let armedFor = Number.POSITIVE_INFINITY;

function arm(deadline: number): void {
  if (timer !== undefined) clearTimeout(timer);
  armedFor = deadline;
  timer = setTimeout(fire, Math.max(0, Math.ceil(deadline - performance.now())));
}

function disarm(): void {
  if (timer !== undefined) clearTimeout(timer);
  timer = undefined;
  armedFor = Number.POSITIVE_INFINITY;
}

function fire(): void {
  timer = undefined;
  armedFor = Number.POSITIVE_INFINITY;
  const now = performance.now();
  let earliest = Number.POSITIVE_INFINITY;
  for (const race of pending) {
    if (race.deadline <= now) race.expire();
    else earliest = Math.min(earliest, race.deadline);
  }
  if (earliest !== Number.POSITIVE_INFINITY) arm(earliest);
}

/** Settle with `work`, or reject with `onTimeout()` after `ms` milliseconds. */
export function raceTimeout<T>(work: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  if (!Number.isFinite(ms) || ms <= 0) return work;
  return new Promise<T>((resolve, reject) => {
    const race: Pending = {
      deadline: performance.now() + ms,
      expire: () => {
        pending.delete(race);
        reject(onTimeout());
      },
    };
    const settle = (): boolean => {
      if (!pending.delete(race)) return false;
      if (pending.size === 0) disarm();
      return true;
    };
    pending.add(race);
    if (race.deadline < armedFor) arm(race.deadline);
    work.then(
      (value) => {
        if (settle()) resolve(value);
      },
      (error: unknown) => {
        if (settle()) reject(error);
      },
    );
  });
}
