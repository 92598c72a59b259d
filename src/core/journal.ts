/**
 * A write-ahead journal that makes a change to several files and folders all-or-nothing, also
 * across `kill -9`: after any crash, `recoverPending` leaves every path in exactly its old state
 * or exactly its new state, never a mix.
 *
 * A transaction names, before touching anything, each path it will change: `stage(path)` reserves
 * a slot inside the journal where the caller builds the new content, `stageRemoval(path)` marks
 * a path to delete. Live state is not touched at all until commit, which swaps every slot in and
 * applies the removals. A staged file is swapped in by one rename over the old file, so a reader
 * never finds a state file missing mid-commit; a folder (node_modules) cannot be renamed over,
 * so the old one is moved to the trash first.
 *
 * On disk (`<ours>/journal/`):
 *
 *     <id>.new/            being created: no intent yet
 *     <id>/intent.json     {version, id, state, label, pid, createdAt, entries[]} — written atomically at
 *                          begin (no entries) and at the commit record (every entry, state committing)
 *     <id>/s/<i>           staged new content of entry i
 *     <id>/t/              trash: live content replaced or removed by the swap
 *     <id>.done/           finished (committed or rolled back), being deleted
 *
 * State machine, and what recovery does at each crash point:
 *
 *     (none) ──begin──▶ .new ──rename──▶ ACTIVE ──commit: fsync, state:=committing──▶ COMMITTING
 *                                          │                                         │ swap staged in
 *                                      rollback                                      ▼
 *                                          └──────────────────────────────▶ .done ──▶ (deleted)
 *
 *   - `.new`, `.done` or ACTIVE folder: delete it. Nothing live was touched (`.new`, ACTIVE: a
 *     rollback), or the outcome is already in place (`.done`).
 *   - COMMITTING: roll forward. The commit record is written only after every staged slot is
 *     complete and fsynced, so the new state is fully determined; finishing the swaps
 *     (idempotently) yields exactly the new state.
 *
 * Every recovery step is idempotent and keyed on what exists on disk (a slot still in `s/` has
 * not been swapped in), so recovery can be killed at any point and run again. Folders are
 * fsynced after each rename that matters.
 *
 * Callers hold the lock (core/lock.ts) around a transaction and around `recoverPending`, and run
 * `recoverPending` before any other work of a command. SIGINT is the CLI's business: it should
 * turn the signal into an abort so that `withTransaction` rolls back; if the process dies
 * instead, the next command's recovery rolls back.
 */
import { randomBytes } from "node:crypto";
import { lstatSync } from "node:fs";
import { mkdir, readdir, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import { STATE_FILE_MODE, fsyncDir, fsyncFile, jsonText, lstatOrUndefined, movePath, pathExists, removeTree, writeJsonAtomic } from "./atomic-fs.js";
import { readTextBounded } from "./bounded-read.js";
import { confinePath, isPathInside, type PathOrigin } from "./contain.js";
import { XcshToolsError, errorMessage, nodeErrorCode } from "./errors.js";
import { confineJournalPath, xcshHomeOfOurs } from "./state-places.js";

/** One path of a transaction, as recorded in `intent.json`: new content staged, or removed. */
export interface JournalEntry {
  path: string;
  kind: "stage" | "remove";
}

interface Intent {
  version: 1;
  id: string;
  state: "active" | "committing";
  label?: string;
  pid: number;
  createdAt: string;
  entries: JournalEntry[];
}

export interface JournalOptions {
  /** What the transaction does ("install @acme/x"), kept in the journal for reports. */
  label?: string;
  /** Called at each named step (tests inject crashes and failures here). */
  onStep?: Step;
}

/** What `recoverPending` did with one interrupted transaction. */
export interface RecoveryReport {
  id: string;
  label: string | undefined;
  action: "rolled-back" | "completed" | "discarded";
}

type Step = (step: string) => void | Promise<void>;
const noStep: Step = () => undefined;

/** The journal folder inside our own folder. */
export function journalRoot(oursDir: string): string {
  return path.join(oursDir, "journal");
}

function journalError(message: string, hint: string, cause?: unknown, file?: string): XcshToolsError {
  return new XcshToolsError("EJOURNAL", message, { hint, cause, file });
}

async function readIntent(dir: string, xcshHome: string): Promise<Intent> {
  const file = path.join(dir, "intent.json");
  // Written only by atomic rename, so a torn file means outside interference, not a crash.
  const value = JSON.parse(readTextBounded(file) ?? "") as Partial<Intent>;
  if (
    value.version !== 1 ||
    (value.state !== "active" && value.state !== "committing") ||
    !Array.isArray(value.entries) ||
    typeof value.id !== "string"
  ) {
    throw journalError(
      `${file} is not a journal this version of xcsh-tools understands`,
      `Inspect ${dir} by hand: its s/ folder holds the new content of the paths listed in intent.json.`,
      undefined,
      file,
    );
  }
  // Every recorded path is checked before recovery moves or deletes anything (state-places.ts):
  // intent.json is a file like any other, and a hand-edited one must not aim a swap or a
  // removal outside our folders.
  value.entries.forEach((entry, i) => {
    const kind = (entry as Partial<JournalEntry> | null)?.kind;
    if (kind !== "stage" && kind !== "remove") {
      throw journalError(`${file} entries/${i}: unknown kind ${JSON.stringify(kind)}`, `Inspect ${dir} by hand.`, undefined, file);
    }
    confineJournalPath((entry as JournalEntry).path, xcshHome, { file, field: `entries/${i}/path` }, { own: actsOnPathItself(entry as JournalEntry, lstatSync(path.join(dir, "s", String(i)), { throwIfNoEntry: false })) });
  });
  return value as Intent;
}

/**
 * Whether journal entry's swap acts on its path itself rather than on what a link there leads to:
 * a removal, or staged content that is not a regular file (a folder or a link, renamed over the
 * path; also a slot already swapped in, `slot` undefined). Only a staged file is written through a
 * link at its path (`swapAll`), so only then is the link followed when the path is confined.
 */
function actsOnPathItself(entry: JournalEntry, slot: { isFile(): boolean } | undefined): boolean {
  return entry.kind === "remove" || !slot?.isFile();
}

/** Move whatever is at `target` into the trash folder (or delete it across file systems). */
async function discardLive(target: string, trash: string): Promise<void> {
  if (!(await pathExists(target))) return;
  await mkdir(trash, { recursive: true });
  const dest = path.join(trash, `${path.basename(target)}-${randomBytes(6).toString("hex")}`);
  try {
    await rename(target, dest);
  } catch (error) {
    if (nodeErrorCode(error) !== "EXDEV") throw error;
    await removeTree(target);
  }
  await fsyncDir(path.dirname(target));
}

/**
 * Swap staged content in and apply removals (COMMITTING → new state). Idempotent. Each path is
 * checked again right before it is replaced (a link may have appeared since it was recorded), and
 * a staged file goes where a link at its path really leads, which that check keeps inside the
 * place the path belongs to (`confineJournalPath`): the link stays a link, as with writeFileAtomic.
 * A folder, and anything removed, replaces or removes the link itself, never what it leads to.
 */
async function swapAll(dir: string, intent: Intent, xcshHome: string, step: Step): Promise<void> {
  const trash = path.join(dir, "t");
  for (const [i, entry] of intent.entries.entries()) {
    const slot = path.join(dir, "s", String(i));
    const slotInfo = entry.kind === "stage" ? await lstatOrUndefined(slot) : undefined;
    if (entry.kind === "stage" && !slotInfo) continue; // already swapped in: nothing to check or move
    const real = confineJournalPath(entry.path, xcshHome, { file: path.join(dir, "intent.json"), field: `entries/${i}/path` }, { own: actsOnPathItself(entry, slotInfo) });
    if (slotInfo) {
      const live = await lstatOrUndefined(entry.path);
      const dest = slotInfo.isFile() && live?.isSymbolicLink() ? real : entry.path;
      // A file over a file (or over nothing) is one rename, so that a reader — the host at boot,
      // another command's lock-free read — sees the old file or the new one, never no file. A
      // folder cannot be renamed over: the old one goes to the trash first.
      if (slotInfo.isDirectory() || live?.isDirectory()) {
        await discardLive(entry.path, trash);
        await step(`commit:swap:${i}:old-moved`);
      }
      await mkdir(path.dirname(dest), { recursive: true });
      await movePath(slot, dest);
      await fsyncDir(path.dirname(dest));
    } else {
      await discardLive(entry.path, trash);
    }
    await step(`commit:swap:${i}:done`);
  }
}

/** Retire a finished transaction folder: rename to `.done` (atomic), then delete. */
async function finish(dir: string, step: Step): Promise<void> {
  const done = `${dir}.done`;
  await rename(dir, done);
  await fsyncDir(path.dirname(dir));
  await step("finish:renamed");
  await removeTree(done);
}

/** A transaction in progress; create with `beginTransaction` or `withTransaction`. */
export class Transaction {
  readonly id: string;
  /** The transaction's journal folder. */
  readonly dir: string;
  #intent: Intent;
  #step: Step;
  #phase: "active" | "committing" | "committed" | "rolled-back" = "active";
  /** Serialises stage calls: each checks its path against the entries recorded before it. */
  #queue: Promise<unknown> = Promise.resolve();

  /** @internal use beginTransaction */
  constructor(dir: string, intent: Intent, options: JournalOptions) {
    this.id = intent.id;
    this.dir = dir;
    this.#intent = intent;
    this.#step = options.onStep ?? noStep;
  }

  /** `active` until `commit`/`rollback`; then `committed` or `rolled-back`. */
  get phase(): string {
    return this.#phase;
  }

  /** Record `target` as an entry of the intent (written with the commit record); resolves to its index. */
  #record(target: string, kind: JournalEntry["kind"]): Promise<number> {
    const run = this.#queue.then(async () => {
      if (this.#phase !== "active") {
        throw journalError(`Transaction ${this.id} is ${this.#phase}`, "This is a bug in xcsh-tools: record paths before commit.");
      }
      const resolved = path.resolve(target);
      // The same rule recovery applies to a recorded path: a bug (or a path taken from a state
      // file) must not make a transaction move or delete anything outside our folders.
      confineJournalPath(resolved, xcshHomeOfOurs(path.dirname(path.dirname(this.dir))), { field: `entries/${this.#intent.entries.length}/path` }, { own: kind === "remove" });
      if (isPathInside(this.dir, resolved)) {
        throw journalError(`Cannot journal ${resolved}: it contains the journal itself`, "Journal the paths inside it instead.");
      }
      for (const other of this.#intent.entries) {
        if (isPathInside(resolved, other.path) || isPathInside(other.path, resolved)) {
          throw journalError(
            `Cannot journal ${resolved}: it overlaps ${other.path}, already in the transaction`,
            "This is a bug in xcsh-tools: each path may be journaled once, and not inside another.",
          );
        }
      }
      const index = this.#intent.entries.length;
      // Kept in memory until the commit record, which writes every entry at once: an ACTIVE
      // transaction is rolled back by deleting its folder whatever its intent lists (nothing live
      // is touched before the commit record), so rewriting intent.json per path (an atomic write,
      // two fsyncs and a rename each) bought no guarantee.
      this.#intent = { ...this.#intent, entries: [...this.#intent.entries, { path: resolved, kind }] };
      await this.#step(`stage:${index}:recorded`);
      return index;
    });
    this.#queue = run.catch(() => undefined);
    return run;
  }

  /**
   * Reserve a staging slot for the new content of `target` and return its path (not created).
   * Build the file or folder there; commit swaps it in. Live `target` is untouched until then.
   */
  async stage(target: string): Promise<string> {
    return path.join(this.dir, "s", String(await this.#record(target, "stage")));
  }

  /** `stage` a JSON file and write its new content (`jsonText`) into the slot; owner-only unless told. */
  async stageJson(target: string, value: unknown, mode = STATE_FILE_MODE): Promise<void> {
    await writeFile(await this.stage(target), jsonText(value), { mode });
  }

  /**
   * Remove `target` at commit (kept as-is if the transaction rolls back). `within` is the folder
   * it must be strictly below once symlinks are resolved (`EPATH_OUTSIDE` otherwise, before
   * anything is recorded): every deletion names the folder it may not leave.
   */
  async stageRemoval(target: string, within: string, origin: Omit<PathOrigin, "what"> & { what?: string } = {}): Promise<void> {
    // The path itself: a link is removed as a link, its target (wherever it is) never touched.
    confinePath(target, within, { what: "folder to delete", ...origin }, { strictlyBelow: true, own: true });
    await this.#record(target, "remove");
  }

  /** Make the new state durable and final; from the commit record on, recovery rolls forward. */
  async commit(): Promise<void> {
    await this.#queue;
    if (this.#phase !== "active") {
      throw journalError(`Transaction ${this.id} is already ${this.#phase}`, "This is a bug in xcsh-tools.");
    }
    for (const [i, entry] of this.#intent.entries.entries()) {
      if (entry.kind !== "stage") continue;
      // Files, and the folder of each staged tree, are fsynced (not every file of the tree): a
      // process crash never loses written data, only a power cut can.
      const slot = path.join(this.dir, "s", String(i));
      const info = await lstatOrUndefined(slot);
      if (!info) {
        throw journalError(`Nothing was staged for ${entry.path}`, "This is a bug in xcsh-tools: write the new content to the path stage() returned.");
      }
      if (info.isFile()) await fsyncFile(slot);
      else if (info.isDirectory()) await fsyncDir(slot);
    }
    await fsyncDir(path.join(this.dir, "s"));
    await this.#step("commit:synced");
    this.#intent = { ...this.#intent, state: "committing" };
    await writeJsonAtomic(path.join(this.dir, "intent.json"), this.#intent);
    this.#phase = "committing";
    await this.#step("commit:marked");
    try {
      await swapAll(this.dir, this.#intent, xcshHomeOfOurs(path.dirname(path.dirname(this.dir))), this.#step);
      await this.#step("commit:finishing");
      await finish(this.dir, this.#step);
    } catch (error) {
      throw journalError(
        `Transaction ${this.id} is committed but could not be completed: ${errorMessage(error)}`,
        "Run any xcsh-tools command again: it completes the interrupted change first.",
        error,
      );
    }
    this.#phase = "committed";
  }

  /** Discard the staged content: live state was never touched. */
  async rollback(): Promise<void> {
    await this.#queue.catch(() => undefined);
    if (this.#phase === "rolled-back") return;
    if (this.#phase !== "active") {
      throw journalError(
        `Transaction ${this.id} is ${this.#phase} and can no longer be rolled back`,
        "Run any xcsh-tools command: it completes the interrupted change.",
      );
    }
    await this.#step("rollback:finishing");
    await finish(this.dir, this.#step);
    this.#phase = "rolled-back";
  }
}

/** Start a transaction: its journal exists (durably, and empty) when this resolves. */
export async function beginTransaction(oursDir: string, options: JournalOptions = {}): Promise<Transaction> {
  const root = journalRoot(oursDir);
  // Sortable ids: recovery handles older transactions first.
  const id = `${Date.now().toString(36).padStart(9, "0")}-${process.pid}-${randomBytes(4).toString("hex")}`;
  const draft = path.join(root, `${id}.new`);
  await mkdir(path.join(draft, "s"), { recursive: true });
  const intent: Intent = {
    version: 1,
    id,
    state: "active",
    ...(options.label === undefined ? {} : { label: options.label }),
    pid: process.pid,
    createdAt: new Date().toISOString(),
    entries: [],
  };
  // writeJsonAtomic fsyncs the draft folder after its rename: the intent is durable in it.
  await writeJsonAtomic(path.join(draft, "intent.json"), intent);
  const dir = path.join(root, id);
  await rename(draft, dir);
  await fsyncDir(root);
  const tx = new Transaction(dir, intent, options);
  try {
    await options.onStep?.("begin:created");
  } catch (error) {
    await tx.rollback();
    throw error;
  }
  return tx;
}

/**
 * Run `fn` in a transaction: commit when it resolves, roll back when it throws or `signal`
 * aborts before commit. The error of `fn` is rethrown (a failed rollback is attached as cause).
 */
export async function withTransaction<T>(
  oursDir: string,
  fn: (tx: Transaction) => Promise<T>,
  options: JournalOptions & { signal?: AbortSignal } = {},
): Promise<T> {
  const tx = await beginTransaction(oursDir, options);
  let result: T;
  try {
    result = await fn(tx);
    if (options.signal?.aborted) {
      throw new XcshToolsError("EABORTED", "Interrupted; the change was rolled back", {
        hint: "Nothing was changed.",
        cause: options.signal.reason,
      });
    }
  } catch (error) {
    try {
      await tx.rollback();
    } catch (rollbackError) {
      throw journalError(
        `${errorMessage(error)}; rolling back also failed: ${errorMessage(rollbackError)}`,
        "Run any xcsh-tools command again: it retries the rollback from the journal first.",
        error,
      );
    }
    throw error;
  }
  try {
    await tx.commit();
  } catch (error) {
    // Before the commit record nothing is final: undo. After it, recovery completes the change.
    if (tx.phase === "active") await tx.rollback();
    throw error;
  }
  return result;
}

/**
 * Finish every transaction a dead process left in `<ours>/journal`: roll back the ACTIVE ones,
 * complete the COMMITTING ones, delete leftovers. Idempotent; run it under the lock, first thing.
 */
export async function recoverPending(
  oursDir: string,
  options: Pick<JournalOptions, "onStep"> = {},
): Promise<RecoveryReport[]> {
  const root = journalRoot(oursDir);
  let names: string[];
  try {
    names = (await readdir(root)).sort();
  } catch (error) {
    if (nodeErrorCode(error) === "ENOENT") return [];
    throw error;
  }
  const step = options.onStep ?? noStep;
  const reports: RecoveryReport[] = [];
  for (const name of names) {
    const dir = path.join(root, name);
    if (name.endsWith(".new") || name.endsWith(".done")) {
      await removeTree(dir);
      if (name.endsWith(".new")) reports.push({ id: name.slice(0, -4), label: undefined, action: "discarded" });
      continue;
    }
    if (name.startsWith(".")) {
      await removeTree(dir); // a temp file of an atomic write in the journal root
      continue;
    }
    let intent: Intent;
    try {
      intent = await readIntent(dir, xcshHomeOfOurs(oursDir));
    } catch (error) {
      if (error instanceof XcshToolsError && error.code === "EPATH_OUTSIDE") throw error;
      throw journalError(
        `Cannot recover the interrupted transaction in ${dir}: ${errorMessage(error)}`,
        `Inspect ${dir} by hand: its s/ folder holds the new content of the paths in intent.json (nothing live changes before its state is "committing").`,
        error,
        path.join(dir, "intent.json"),
      );
    }
    const committed = intent.state === "committing";
    if (committed) await swapAll(dir, intent, xcshHomeOfOurs(oursDir), step);
    await finish(dir, step);
    reports.push({ id: intent.id, label: intent.label, action: committed ? "completed" : "rolled-back" });
  }
  return reports;
}
