//! Functions exported to a file and imported back: values, shapeless traces, several traces in
//! one file, keyword arguments, calls from many threads at once, and the errors of bad
//! arguments and bad files.
mod common;

use std::collections::HashMap;
use std::sync::Arc;
use std::thread;

use braid::{export_function, export_function_kwargs, ops, Array, Error, FunctionExporter, ImportedFunction};

fn temp_file(name: &str) -> String {
    let dir = std::env::temp_dir();
    dir.join(format!("braid-rust-{}-{}.mlxfn", std::process::id(), name)).to_string_lossy().into_owned()
}

// x * w + b with w and b captured from the Rust function's environment.
fn affine() -> impl Fn(&[Array]) -> braid::Result<Vec<Array>> + Send + Sync + 'static {
    let w = Array::from_slice(&[2.0f32, -1.0, 0.5], &[3]).unwrap();
    let b = Array::from(10.0f32);
    move |x: &[Array]| Ok(vec![ops::add(&ops::multiply(&x[0], &w)?, &b)?])
}

#[test]
fn an_exported_function_computes_the_same_values_once_imported() {
    let _guard = common::watchdog("export values", 120);
    let path = temp_file("values");
    let x = Array::from_slice(&[1.0f32, 2.0, 3.0], &[3]).unwrap();
    export_function(&path, affine(), &[x.clone()], false).unwrap();
    let imported = ImportedFunction::new(&path).unwrap();
    let out = imported.apply(&[x]).unwrap();
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].to_vec::<f32>().unwrap(), vec![12.0, 8.0, 11.5]);
    // Other values of the traced shape.
    let y = Array::from_slice(&[0.0f32, 0.0, 2.0], &[3]).unwrap();
    assert_eq!(imported.apply(&[y]).unwrap()[0].to_vec::<f32>().unwrap(), vec![10.0, 10.0, 11.0]);
    // A shape the trace does not have is an error, and the function stays usable.
    let wrong = Array::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
    let err = imported.apply(&[wrong]).unwrap_err();
    assert!(!err.to_string().is_empty());
    assert!(imported.apply(&[Array::from_slice(&[1.0f32, 1.0, 1.0], &[3]).unwrap()]).is_ok());
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn a_shapeless_export_accepts_other_shapes() {
    let _guard = common::watchdog("export shapeless", 120);
    let path = temp_file("shapeless");
    let square_plus_one =
        |x: &[Array]| Ok(vec![ops::add(&ops::multiply(&x[0], &x[0])?, &Array::from(1.0f32))?]);
    export_function(&path, square_plus_one, &[Array::from_slice(&[1.0f32, 2.0], &[2]).unwrap()], true)
        .unwrap();
    let imported = ImportedFunction::new(&path).unwrap();
    let m = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).unwrap();
    let err = imported.apply(&[m]).unwrap_err(); // another rank: no trace
    assert!(!err.to_string().is_empty());
    let v = Array::from_slice(&[3.0f32, 0.0, -2.0, 1.0], &[4]).unwrap();
    assert_eq!(imported.apply(&[v]).unwrap()[0].to_vec::<f32>().unwrap(), vec![10.0, 1.0, 5.0, 2.0]);
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn one_imported_function_serves_many_threads_at_once() {
    let _guard = common::watchdog("export threads", 180);
    let path = temp_file("threads");
    export_function(&path, affine(), &[Array::from_slice(&[0.0f32; 3], &[3]).unwrap()], false).unwrap();
    let imported = Arc::new(ImportedFunction::new(&path).unwrap());
    let workers: Vec<_> = (0..8)
        .map(|t| {
            let f = Arc::clone(&imported);
            thread::spawn(move || {
                for i in 0..50 {
                    let v = (t * 100 + i) as f32;
                    let x = Array::from_slice(&[v, v, v], &[3]).unwrap();
                    let out = f.apply(&[x]).unwrap()[0].to_vec::<f32>().unwrap();
                    assert_eq!(out, vec![2.0 * v + 10.0, 10.0 - v, 0.5 * v + 10.0]);
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn missing_and_foreign_files_are_errors() {
    assert!(ImportedFunction::new("/nonexistent/braid/function.mlxfn").is_err());
    let path = temp_file("foreign");
    std::fs::write(&path, b"not an exported function").unwrap();
    assert!(ImportedFunction::new(&path).is_err());
    std::fs::remove_file(&path).unwrap();
    let x = Array::from(1.0f32);
    assert!(export_function("/nonexistent/dir/f.mlxfn", affine(), &[x], false).is_err());
}

fn keywords(entries: &[(&str, Array)]) -> HashMap<String, Array> {
    entries.iter().map(|(name, value)| (name.to_string(), value.clone())).collect()
}

#[test]
fn an_exporter_writes_traces_of_two_shapes_to_one_file() {
    let _guard = common::watchdog("exporter shapes", 120);
    let path = temp_file("exporter-shapes");
    let twice_plus_one =
        |x: &[Array]| Ok(vec![ops::add(&ops::multiply(&x[0], &Array::from(2.0f32))?, &Array::from(1.0f32))?]);
    let exporter = FunctionExporter::new(&path, twice_plus_one, false).unwrap();
    exporter.apply(&[Array::from_slice(&[0.0f32; 3], &[3]).unwrap()]).unwrap();
    exporter.apply(&[Array::from_slice(&[0.0f32; 4], &[2, 2]).unwrap()]).unwrap();
    drop(exporter);

    let imported = ImportedFunction::new(&path).unwrap();
    let v = Array::from_slice(&[1.0f32, -2.0, 0.5], &[3]).unwrap();
    assert_eq!(imported.apply(&[v]).unwrap()[0].to_vec::<f32>().unwrap(), vec![3.0, -3.0, 2.0]);
    let m = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
    let out = imported.apply(&[m]).unwrap();
    assert_eq!(out[0].shape(), vec![2, 2]);
    assert_eq!(out[0].to_vec::<f32>().unwrap(), vec![3.0, 5.0, 7.0, 9.0]);
    // A shape neither trace has.
    assert!(imported.apply(&[Array::from_slice(&[1.0f32; 4], &[4]).unwrap()]).is_err());
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn an_exporter_refuses_a_second_trace_of_one_signature_and_keywords() {
    let path = temp_file("exporter-refusals");
    let exporter = FunctionExporter::new(&path, affine(), false).unwrap();
    let x = Array::from_slice(&[1.0f32, 2.0, 3.0], &[3]).unwrap();
    exporter.apply(std::slice::from_ref(&x)).unwrap();
    let err = exporter.apply(&[Array::from_slice(&[4.0f32, 5.0, 6.0], &[3]).unwrap()]).unwrap_err();
    assert!(err.message.contains("same signature"), "{}", err);
    let err = exporter.apply_kwargs(&[], &keywords(&[("x", x.clone())])).unwrap_err();
    assert!(err.message.contains("keyword"), "{}", err);
    // An error from the Rust function itself (here braid's, from an impossible broadcast).
    assert!(exporter.apply(&[Array::from_slice(&[1.0f32, 2.0], &[2]).unwrap()]).is_err());
    drop(exporter);
    // The refusals left the first trace intact.
    let imported = ImportedFunction::new(&path).unwrap();
    assert_eq!(imported.apply(&[x]).unwrap()[0].to_vec::<f32>().unwrap(), vec![12.0, 8.0, 11.5]);
    std::fs::remove_file(&path).unwrap();
    assert!(FunctionExporter::new("/nonexistent/dir/f.mlxfn", affine(), false).is_err());
}

#[test]
fn a_function_of_keyword_arguments_survives_export_and_import() {
    let _guard = common::watchdog("export kwargs", 120);
    let path = temp_file("kwargs");
    let scale_and_shift = |args: &[Array], kwargs: &HashMap<String, Array>| {
        Ok(vec![ops::add(&ops::multiply(&args[0], &kwargs["scale"])?, &kwargs["shift"])?])
    };
    let x = Array::from_slice(&[1.0f32, 2.0, 3.0], &[3]).unwrap();
    let example = keywords(&[("scale", Array::from(1.0f32)), ("shift", Array::from(0.0f32))]);
    export_function_kwargs(&path, scale_and_shift, &[x.clone()], &example, false).unwrap();

    let imported = ImportedFunction::new(&path).unwrap();
    let kwargs = keywords(&[("scale", Array::from(3.0f32)), ("shift", Array::from(-1.0f32))]);
    let out = imported.apply_kwargs(std::slice::from_ref(&x), &kwargs).unwrap();
    assert_eq!(out[0].to_vec::<f32>().unwrap(), vec![2.0, 5.0, 8.0]);
    // Signatures the file has no trace for: keywords left out or renamed, a second argument.
    assert!(imported.apply(std::slice::from_ref(&x)).is_err());
    let renamed = keywords(&[("scale", Array::from(3.0f32)), ("offset", Array::from(-1.0f32))]);
    assert!(imported.apply_kwargs(std::slice::from_ref(&x), &renamed).is_err());
    assert!(imported.apply_kwargs(&[x.clone(), x], &kwargs).is_err());
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn an_err_from_a_function_of_keywords_comes_back_from_the_export() {
    let path = temp_file("kwargs-err");
    let needs_bias = |_: &[Array], kwargs: &HashMap<String, Array>| match kwargs.get("bias") {
        Some(bias) => Ok(vec![bias.clone()]),
        None => Err(Error { message: "no bias given".to_string() }),
    };
    let x = Array::from(1.0f32);
    let err =
        export_function_kwargs(&path, needs_bias, &[x], &keywords(&[("scale", Array::from(2.0f32))]), false)
            .unwrap_err();
    assert_eq!(err.message, "no bias given");
    let _ = std::fs::remove_file(&path);
}
