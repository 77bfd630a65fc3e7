// Background threads of a process: a name each (top -H, /proc/PID/task, bench_load's per-thread
// CPU) and, in a process with a GUI, a scheduling priority below the GUI thread's. Why: at issue
// #20's load on 2 cores, a page paint needed 6-8 ms of CPU but took 24-38 ms of wall time at p99,
// waiting for a core behind the process's own ingest, writer and reader threads (0.9 cores),
// while the GUI thread itself needs 0.07 cores (docs/performance.md, "The GUI thread first").
#pragma once

namespace runplane::threads {

/// The GUI's setting: background threads run this many nice levels below the GUI thread.
/// 10 levels: CFS weight 1024 against 110, so a painting GUI thread gets ~90 % of a core they
/// share; 5 (1024 : 335) took the p99 only part of the way (docs/performance.md).
inline constexpr int kGuiBackgroundNice = 10;

/// Process-wide, before the threads it concerns start (the GUI sets it once, before any):
/// background threads that call enterBackground from now on run `levels` nice levels below the
/// calling thread (0: the same, the default; clamped to Linux's 19). Lowering a thread's own
/// priority needs no privilege; raising it back would need CAP_SYS_NICE, so a thread lowered stays
/// lowered.
void setBackgroundNice(int levels);

/// The levels set by setBackgroundNice (0 if never called).
int backgroundNice();

/// First thing a background thread does: names itself (cut to Linux's 15 characters) and, where
/// setBackgroundNice asked for it, lowers its own priority. Failure to renice is ignored (the
/// thread then runs at its inherited priority, as before).
void enterBackground(const char* name);

/// The calling thread's nice value (Linux per-thread), for tests and reports.
int currentThreadNice();

/// Asks the kernel for a time slice of `microseconds` for the calling thread (Linux 6.12+,
/// EEVDF's custom slices: sched_setattr's sched_runtime for a SCHED_OTHER thread, 100 us to
/// 100 ms; no privilege needed). A slice shorter than the default gives the thread earlier
/// deadlines, so on waking it preempts a thread with a longer slice instead of waiting for that
/// slice to end. Keeps the thread's policy and nice. False where the kernel refused or has no
/// such call; 0 asks for the kernel's default again.
bool setOwnSlice(int microseconds);

/// The calling thread's time slice in microseconds as the kernel reports it (sched_getattr's
/// sched_runtime), or 0 where it cannot be read.
int ownSlice();

}  // namespace runplane::threads
