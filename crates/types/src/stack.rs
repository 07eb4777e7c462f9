//! Deep recursion without stack overflows.
//!
//! The layers above walk trees recursively: the parser descends into nested
//! expressions, the binder and the evaluator follow the syntax tree, the
//! planner and executor follow subqueries and joins. The parser bounds how
//! deep those trees can be (`rowtree_parser::MAX_NESTING`), so the
//! recursion is bounded, but the stack one level takes varies by layer and
//! by build (a debug build's frames are several times a release build's),
//! and requests run on threads whose stacks were sized by someone else (a
//! tokio worker has 2 MiB, a test thread 2 MiB, a main thread 8 MiB).
//!
//! [`guarded`] makes that sizing unnecessary: each recursive entry point
//! runs its body through it, and when less than [`RED_ZONE`] of the current
//! stack remains, the body continues on a fresh heap-allocated stack segment
//! of [`SEGMENT`] bytes (the technique rustc uses, via the `stacker` crate).
//! The depth bound keeps the total finite; this keeps any thread safe.

/// Stack that must remain before a guarded body runs on the current stack:
/// more than any layer uses between two guarded calls, including the
/// recursions that are not guarded (derived `Clone`, `PartialEq` and `Drop`
/// of a whole syntax tree nested to the parser's limit). Unoptimised builds
/// take several times the stack per level, hence the larger zone there.
pub const RED_ZONE: usize = if cfg!(debug_assertions) {
    4 << 20
} else {
    1 << 20
};

/// Size of each additional stack segment.
pub const SEGMENT: usize = 16 << 20;

/// The stack size of every thread Rowtree starts to run statements (the
/// server's runtime, `rowtree sql`): comfortably more than [`RED_ZONE`], so
/// that ordinary statements never leave it. Only address space is reserved;
/// memory is used as the stack grows.
pub const THREAD_STACK: usize = 32 << 20;

/// Runs `body`, on a new stack segment if the current one is nearly used up.
/// Cheap when it is not (one comparison against the stack pointer).
#[inline]
pub fn guarded<R>(body: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(RED_ZONE, SEGMENT, body)
}

#[cfg(test)]
mod tests {
    use super::guarded;

    /// A recursion far deeper than the thread's stack allows, with a frame
    /// of 4 KiB per level (100 MiB of stack in all); returns the depth.
    fn deep(n: usize) -> usize {
        let frame = std::hint::black_box([1u8; 4096]);
        if n == 0 {
            return 0;
        }
        guarded(|| deep(n - 1)) + usize::from(frame[n % 4096])
    }

    #[test]
    fn recursion_beyond_the_thread_stack_survives() {
        // On a thread smaller than the red zone, as well as on a sized one.
        for stack in [1 << 20, super::THREAD_STACK] {
            let depth = std::thread::Builder::new()
                .stack_size(stack)
                .spawn(|| deep(25_000))
                .unwrap()
                .join()
                .unwrap();
            assert_eq!(depth, 25_000);
        }
    }
}
