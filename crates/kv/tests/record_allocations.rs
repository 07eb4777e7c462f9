//! `LoadTracker::record` is on the path of every request: once warm it must
//! not allocate (sample slots reuse their key buffers, even after a reset).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::time::Instant;

use rowtree_kv::{Access, LoadTracker};

struct Counting;

thread_local! {
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.with(|a| a.set(a.get() + 1));
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocs() -> u64 {
    ALLOCS.with(Cell::get)
}

#[test]
fn record_does_not_allocate_once_warm() {
    let mut t = LoadTracker::starting_at(1);
    let mut x = 0x1234_5678_u64;
    let mut next_key = || {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        x.to_be_bytes()
    };
    // Warm: several seconds of accesses, so every buffer (samples, the
    // running extreme keys and those at the end of each of the seconds the
    // frontier looks back over) has been used.
    for i in 0..6000u64 {
        t.record(i * 1_000_000, &Access::read(&next_key(), 1, 10, 100));
    }
    t.reset_sample();
    let before = allocs();
    let started = Instant::now();
    let n = 200_000u64;
    for i in 0..n {
        let k = next_key();
        let access = if i % 3 == 0 {
            Access::scan(&k, None, 5, 50, 1000)
        } else {
            Access::write(&k, 1, 10, 100)
        };
        t.record(i * 1_000_000, &access);
    }
    let elapsed = started.elapsed();
    assert_eq!(allocs() - before, 0, "no allocation per access");
    println!(
        "record: {:.0} ns per access (this build)",
        elapsed.as_nanos() as f64 / n as f64
    );
}
