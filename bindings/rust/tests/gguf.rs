//! GGUF files through `io::load_gguf` and `io::save_gguf`: arrays of every dtype GGUF holds and
//! every kind of metadata value round trip, bad paths and bad files are errors, and threads
//! save and load at once with no lock of their own.
mod common;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::thread;

use braid::io::{self, GgufMetadata};
use braid::{ops, Array, Dtype};
use common::{thread_count, watchdog};

fn temp_path(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("braid-rust-gguf-{}-{}", std::process::id(), name))
}

fn floats(values: &[f32], shape: &[i32]) -> Array {
    Array::from_slice(values, shape).unwrap()
}

/// The values of any real array, as f32 (float16 and bfloat16 are read through a cast).
fn as_f32(array: &Array) -> Vec<f32> {
    array.astype(Dtype::Float32).unwrap().to_vec::<f32>().unwrap()
}

fn array_value<'a>(meta: &'a HashMap<String, GgufMetadata>, key: &str) -> &'a Array {
    match &meta[key] {
        GgufMetadata::Array(array) => array,
        other => panic!("{}: expected an array, got {:?}", key, other),
    }
}

#[test]
fn arrays_of_every_gguf_dtype_and_shape_round_trip() {
    let halves = [0.5f32, -1.5, 2.0, 4.25];
    let mut arrays = HashMap::new();
    arrays.insert("f32".to_string(), floats(&[0.5, -1.5, 2.0, 4.25, -8.0, 16.5], &[2, 3]));
    arrays.insert("f16".to_string(), floats(&halves, &[2, 2]).astype(Dtype::Float16).unwrap());
    arrays.insert("bf16".to_string(), floats(&halves[..3], &[3]).astype(Dtype::Bfloat16).unwrap());
    arrays.insert("f64".to_string(), Array::from_slice(&[0.1f64, -2.5, 1e300, 3.0], &[4]).unwrap());
    let bytes = Array::from_slice(&[-128i8, -1, 0, 1, 2, 3, 4, 127], &[2, 2, 2]).unwrap();
    arrays.insert("i8".to_string(), bytes);
    arrays.insert("i16".to_string(), Array::from_slice(&[-30000i16, 7, 30000], &[3]).unwrap());
    arrays.insert("i32".to_string(), Array::from_slice(&[7i32, -3, 11, i32::MIN], &[1, 4]).unwrap());
    arrays.insert("i64".to_string(), Array::from_slice(&[i64::MAX, -5], &[2]).unwrap());
    arrays.insert("scalar".to_string(), Array::from(-3.0f32));
    arrays.insert("empty".to_string(), ops::zeros(&[0, 2], Dtype::Float32).unwrap());
    // A lazy, transposed array is evaluated and written row-major.
    let transposed = floats(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).transpose().unwrap();
    arrays.insert("blk.0.attn_q.weight".to_string(), transposed);

    let stem = temp_path("dtypes");
    io::save_gguf(&stem, &arrays, &HashMap::new()).unwrap();
    let file = stem.with_extension("gguf"); // added, as MLX does
    let (loaded, meta) = io::load_gguf(&file).unwrap();
    std::fs::remove_file(&file).unwrap();

    assert!(meta.is_empty(), "{:?}", meta);
    let mut names: Vec<_> = loaded.keys().cloned().collect();
    names.sort();
    let mut expected: Vec<_> = arrays.keys().cloned().collect();
    expected.sort();
    assert_eq!(names, expected);
    for (name, array) in &arrays {
        let back = &loaded[name];
        assert_eq!((back.shape(), back.dtype()), (array.shape(), array.dtype()), "{}", name);
    }
    assert_eq!(as_f32(&loaded["f32"]), vec![0.5, -1.5, 2.0, 4.25, -8.0, 16.5]);
    assert_eq!(as_f32(&loaded["f16"]), halves.to_vec());
    assert_eq!(as_f32(&loaded["bf16"]), halves[..3].to_vec());
    assert_eq!(loaded["f64"].to_vec::<f64>().unwrap(), vec![0.1, -2.5, 1e300, 3.0]);
    assert_eq!(loaded["i8"].to_vec::<i8>().unwrap(), vec![-128, -1, 0, 1, 2, 3, 4, 127]);
    assert_eq!(loaded["i16"].to_vec::<i16>().unwrap(), vec![-30000, 7, 30000]);
    assert_eq!(loaded["i32"].to_vec::<i32>().unwrap(), vec![7, -3, 11, i32::MIN]);
    assert_eq!(loaded["i64"].to_vec::<i64>().unwrap(), vec![i64::MAX, -5]);
    assert_eq!(loaded["scalar"].item::<f32>().unwrap(), -3.0);
    assert!(loaded["empty"].to_vec::<f32>().unwrap().is_empty());
    assert_eq!(loaded["blk.0.attn_q.weight"].to_vec::<f32>().unwrap(), vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
}

#[test]
fn metadata_of_every_kind_round_trips() {
    let tokens: Vec<String> = ["<s>", "</s>", "héllo", ""].iter().map(|s| s.to_string()).collect();
    let mut meta = HashMap::new();
    meta.insert("general.architecture".to_string(), GgufMetadata::from("llama"));
    meta.insert("general.name".to_string(), GgufMetadata::String("naïve ✓ model".to_string()));
    meta.insert("tokenizer.ggml.tokens".to_string(), GgufMetadata::Strings(tokens.clone()));
    meta.insert("tokenizer.ggml.merges".to_string(), GgufMetadata::from(Vec::<String>::new()));
    meta.insert("llama.block_count".to_string(), GgufMetadata::from(Array::scalar(32u32).unwrap()));
    meta.insert("llama.rope.freq_base".to_string(), Array::scalar(10000.5f64).unwrap().into());
    meta.insert("llama.eps".to_string(), floats(&[1e-5, 1e-6], &[2]).into());
    let token_types = Array::from_slice(&[1i64, -2, 3], &[3]).unwrap();
    meta.insert("tokenizer.ggml.token_type".to_string(), token_types.into());
    meta.insert("tokenizer.ggml.add_bos_token".to_string(), Array::from(true).into());
    meta.insert("flags".to_string(), Array::from_slice(&[true, false, true], &[3]).unwrap().into());
    meta.insert("bytes".to_string(), Array::from_slice(&[0u8, 255], &[2]).unwrap().into());
    let mut arrays = HashMap::new();
    arrays.insert("token_embd.weight".to_string(), floats(&[1.0, 2.0], &[1, 2]));

    let file = temp_path("metadata.gguf");
    io::save_gguf(&file, &arrays, &meta).unwrap();
    let (loaded, back) = io::load_gguf(&file).unwrap();
    std::fs::remove_file(&file).unwrap();

    assert_eq!(loaded["token_embd.weight"].to_vec::<f32>().unwrap(), vec![1.0, 2.0]);
    assert_eq!(back.len(), meta.len());
    match (&back["general.architecture"], &back["general.name"]) {
        (GgufMetadata::String(arch), GgufMetadata::String(name)) => {
            assert_eq!((arch.as_str(), name.as_str()), ("llama", "naïve ✓ model"))
        }
        other => panic!("expected two strings, got {:?}", other),
    }
    match (&back["tokenizer.ggml.tokens"], &back["tokenizer.ggml.merges"]) {
        (GgufMetadata::Strings(got), GgufMetadata::Strings(merges)) => {
            assert_eq!(got, &tokens);
            assert!(merges.is_empty(), "{:?}", merges);
        }
        other => panic!("expected two string lists, got {:?}", other),
    }
    let count = array_value(&back, "llama.block_count");
    assert_eq!((count.ndim(), count.dtype(), count.item::<u32>().unwrap()), (0, Dtype::Uint32, 32));
    let base = array_value(&back, "llama.rope.freq_base");
    assert_eq!((base.ndim(), base.item::<f64>().unwrap()), (0, 10000.5));
    let eps = array_value(&back, "llama.eps");
    assert_eq!((eps.shape(), eps.to_vec::<f32>().unwrap()), (vec![2], vec![1e-5, 1e-6]));
    assert_eq!(array_value(&back, "tokenizer.ggml.token_type").to_vec::<i64>().unwrap(), vec![1, -2, 3]);
    let bos = array_value(&back, "tokenizer.ggml.add_bos_token");
    assert_eq!((bos.ndim(), bos.item::<bool>().unwrap()), (0, true));
    assert_eq!(array_value(&back, "flags").to_vec::<bool>().unwrap(), vec![true, false, true]);
    assert_eq!(array_value(&back, "bytes").to_vec::<u8>().unwrap(), vec![0, 255]);
}

#[test]
fn a_missing_file_or_directory_is_an_err() {
    let err = io::load_gguf("/nonexistent/braid-rust-test.gguf").unwrap_err();
    assert!(err.message.contains("[load_gguf]"), "{}", err);
    let mut arrays = HashMap::new();
    arrays.insert("x".to_string(), floats(&[1.0], &[1]));
    let err = io::save_gguf("/nonexistent/dir/braid-rust-test.gguf", &arrays, &HashMap::new()).unwrap_err();
    assert!(err.message.contains("[save_gguf]"), "{}", err);
}

#[test]
fn a_file_that_is_not_gguf_is_an_err() {
    let text = temp_path("not-gguf.gguf");
    std::fs::write(&text, b"this is a text file, not a GGUF file\n").unwrap();
    let err = io::load_gguf(&text).unwrap_err();
    std::fs::remove_file(&text).unwrap();
    assert!(err.message.contains("[load_gguf]"), "{}", err);

    // A real GGUF file cut short in its tensor data.
    let cut = temp_path("truncated.gguf");
    let mut arrays = HashMap::new();
    arrays.insert("w".to_string(), ops::ones(&[64], Dtype::Float32).unwrap());
    io::save_gguf(&cut, &arrays, &HashMap::new()).unwrap();
    let bytes = std::fs::read(&cut).unwrap();
    std::fs::write(&cut, &bytes[..bytes.len() - 100]).unwrap();
    let err = io::load_gguf(&cut).unwrap_err();
    std::fs::remove_file(&cut).unwrap();
    assert!(err.message.contains("[load_gguf]"), "{}", err);
}

#[test]
fn what_gguf_cannot_hold_is_an_err_and_writes_no_file() {
    let file = temp_path("refused.gguf");
    let refuse = |arrays: HashMap<String, Array>, meta: HashMap<String, GgufMetadata>, what: &str| {
        let err = io::save_gguf(&file, &arrays, &meta).unwrap_err();
        assert!(!file.exists(), "{}: a file was written", what);
        err
    };
    let one = |name: &str, array: Array| -> HashMap<String, Array> {
        let mut map = HashMap::new();
        map.insert(name.to_string(), array);
        map
    };
    let meta = |key: &str, value: GgufMetadata| -> HashMap<String, GgufMetadata> {
        let mut map = HashMap::new();
        map.insert(key.to_string(), value);
        map
    };

    let complex = ops::zeros(&[2], Dtype::Complex64).unwrap();
    let err = refuse(one("c", complex), HashMap::new(), "a complex64 tensor");
    assert!(err.message.contains("[save_gguf]"), "{}", err);
    let matrix = floats(&[1.0, 2.0, 3.0, 4.0], &[2, 2]);
    let err = refuse(HashMap::new(), meta("m", matrix.into()), "a 2-d metadata array");
    assert!(err.message.contains("[save_gguf]"), "{}", err);
    let empty = ops::zeros(&[0], Dtype::Float32).unwrap();
    let err = refuse(HashMap::new(), meta("m", empty.into()), "an empty metadata array");
    assert!(err.message.contains("[save_gguf]"), "{}", err);
    let half = floats(&[1.0], &[1]).astype(Dtype::Float16).unwrap();
    let err = refuse(HashMap::new(), meta("m", half.into()), "float16 metadata");
    assert!(err.message.contains("[save_gguf]"), "{}", err);
    refuse(HashMap::new(), meta("a\0b", "x".into()), "a key with a NUL");
    refuse(HashMap::new(), meta("m", "x\0y".into()), "a string with a NUL");
    refuse(HashMap::new(), meta("m", GgufMetadata::Strings(vec!["a\0".to_string()])), "a NUL in a list");
}

/// Arrays and metadata that differ by `seed`.
fn model(seed: i32) -> (HashMap<String, Array>, HashMap<String, GgufMetadata>) {
    let base = seed as f32;
    let mut arrays = HashMap::new();
    arrays.insert("w".to_string(), floats(&[base, base + 1.0, base + 2.0, base + 3.0], &[2, 2]));
    let lazy = ops::arange(0.0, 100.0, 1.0, Dtype::Float32).unwrap() + base; // exact in float16
    arrays.insert("lazy".to_string(), lazy.astype(Dtype::Float16).unwrap());
    arrays.insert("ids".to_string(), Array::from_slice(&[seed as i64, -(seed as i64)], &[2]).unwrap());
    let mut meta = HashMap::new();
    meta.insert("name".to_string(), GgufMetadata::String(format!("model {}", seed)));
    meta.insert("seed".to_string(), Array::scalar(seed).unwrap().into());
    meta.insert("tokens".to_string(), GgufMetadata::Strings(vec![format!("t{}", seed), "x".to_string()]));
    (arrays, meta)
}

/// Asserts that a loaded file holds `model(seed)`.
fn check_model(arrays: &HashMap<String, Array>, meta: &HashMap<String, GgufMetadata>, seed: i32) {
    let base = seed as f32;
    assert_eq!(arrays.len(), 3);
    assert_eq!(arrays["w"].to_vec::<f32>().unwrap(), vec![base, base + 1.0, base + 2.0, base + 3.0]);
    let lazy = as_f32(&arrays["lazy"]);
    assert_eq!(lazy.len(), 100);
    assert_eq!((lazy[3], lazy[99]), (3.0 + base, 99.0 + base), "seed {}", seed);
    assert_eq!(arrays["ids"].to_vec::<i64>().unwrap(), vec![seed as i64, -(seed as i64)]);
    match (&meta["name"], &meta["tokens"]) {
        (GgufMetadata::String(name), GgufMetadata::Strings(tokens)) => {
            assert_eq!(name, &format!("model {}", seed));
            assert_eq!(tokens, &vec![format!("t{}", seed), "x".to_string()]);
        }
        other => panic!("seed {}: {:?}", seed, other),
    }
    assert_eq!(array_value(meta, "seed").item::<i32>().unwrap(), seed);
}

#[test]
fn threads_save_and_load_their_own_files_at_once() {
    let _dog = watchdog("threads_save_and_load_their_own_files_at_once", 120);
    let workers: Vec<_> = (0..thread_count())
        .map(|i| {
            thread::spawn(move || {
                let seed = i as i32 + 1;
                let file = temp_path(&format!("thread-{}.gguf", seed));
                for _ in 0..5 {
                    let (arrays, meta) = model(seed);
                    io::save_gguf(&file, &arrays, &meta).unwrap();
                    let (arrays, meta) = io::load_gguf(&file).unwrap();
                    check_model(&arrays, &meta, seed);
                }
                std::fs::remove_file(&file).unwrap();
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
}

#[test]
fn threads_load_one_file_at_once_and_use_what_another_loaded() {
    let _dog = watchdog("threads_load_one_file_at_once_and_use_what_another_loaded", 120);
    let file = Arc::new(temp_path("shared.gguf"));
    let (arrays, meta) = model(42);
    io::save_gguf(&*file, &arrays, &meta).unwrap();
    let readers: Vec<_> = (0..thread_count())
        .map(|_| {
            let file = Arc::clone(&file);
            thread::spawn(move || {
                let mut last = None;
                for _ in 0..5 {
                    let (arrays, meta) = io::load_gguf(&*file).unwrap();
                    check_model(&arrays, &meta, 42);
                    last = Some((arrays, meta));
                }
                last.unwrap() // handed back to the spawning thread
            })
        })
        .collect();
    for reader in readers {
        let (arrays, meta) = reader.join().unwrap();
        check_model(&arrays, &meta, 42);
    }
    std::fs::remove_file(&*file).unwrap();
}
