//! The process-wide random state used from many tests at once (libtest's threads), with no
//! lock: braid advances its key sequence under its own lock, so draws never repeat a key.
//! Explicit keys give the same numbers on every thread.
mod common;

use std::collections::HashSet;
use std::thread;

use braid::{random, Array, Dtype};
use common::{thread_count, watchdog};

/// Draws from the global sequence: valid values, and no two draws alike.
fn draw_from_global_state(test: &str) {
    let _dog = watchdog("global random state test", 60);
    let mut seen = HashSet::new();
    for _ in 0..20 {
        let u =
            random::uniform(&Array::from(0.0f32), &Array::from(1.0f32), &[64], Dtype::Float32, None).unwrap();
        let values = u.to_vec::<f32>().unwrap();
        assert!(values.iter().all(|v| (0.0..1.0).contains(v)), "{}: {:?}", test, values);
        let bits: Vec<u32> = values.iter().map(|v| v.to_bits()).collect();
        assert!(seen.insert(bits), "{}: two draws gave the same numbers", test);
        let n = random::normal(&[16], Dtype::Float32, 0.0, 1.0, None).unwrap();
        assert!(n.to_vec::<f32>().unwrap().iter().all(|v| v.is_finite()));
    }
}

macro_rules! global_state_tests {
    ($($name:ident,)*) => {
        $(
            #[test]
            fn $name() {
                draw_from_global_state(stringify!($name));
            }
        )*
    };
}

global_state_tests! {
    global_random_state_a, global_random_state_b, global_random_state_c, global_random_state_d,
    global_random_state_e, global_random_state_f, global_random_state_g, global_random_state_h,
    global_random_state_i, global_random_state_j, global_random_state_k, global_random_state_l,
    global_random_state_m, global_random_state_n, global_random_state_o, global_random_state_p,
}

#[test]
fn seeding_while_other_tests_draw_is_safe() {
    let _dog = watchdog("seeding_while_other_tests_draw_is_safe", 60);
    for seed in 0..50u64 {
        random::seed(seed).unwrap();
        let bits = random::bits(&[4], 4, None).unwrap();
        assert_eq!(bits.to_vec::<u32>().unwrap().len(), 4);
    }
}

#[test]
fn draws_from_many_threads_never_repeat() {
    let _dog = watchdog("draws_from_many_threads_never_repeat", 60);
    let drawers: Vec<_> = (0..thread_count())
        .map(|_| {
            thread::spawn(|| {
                (0..32)
                    .map(|_| random::bits(&[8], 4, None).unwrap().to_vec::<u32>().unwrap())
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut seen = HashSet::new();
    for drawer in drawers {
        for draw in drawer.join().unwrap() {
            assert!(seen.insert(draw), "two draws shared a key");
        }
    }
}

#[test]
fn an_explicit_key_gives_the_same_numbers_on_every_thread() {
    let _dog = watchdog("an_explicit_key_gives_the_same_numbers_on_every_thread", 60);
    let seed = 20240611u64;
    println!("seed {}", seed);
    let key = random::key(seed).unwrap();
    let expected =
        random::normal(&[32], Dtype::Float32, 0.0, 1.0, Some(&key)).unwrap().to_vec::<f32>().unwrap();
    let threads: Vec<_> = (0..thread_count())
        .map(|_| {
            let key = key.clone();
            thread::spawn(move || {
                random::normal(&[32], Dtype::Float32, 0.0, 1.0, Some(&key)).unwrap().to_vec::<f32>().unwrap()
            })
        })
        .collect();
    for t in threads {
        assert_eq!(t.join().unwrap(), expected);
    }
    let (left, right) = random::split(&key).unwrap();
    assert_ne!(left.to_vec::<u32>().unwrap(), right.to_vec::<u32>().unwrap());
}
