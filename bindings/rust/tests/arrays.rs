//! Arrays, the core ops, operators, streams and devices, and files, one behaviour per test.
mod common;

use std::collections::HashMap;

use braid::{io, ops, Array, Device, DeviceType, Dtype, Stream};
use common::assert_close;

fn matrix() -> Array {
    Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).unwrap()
}

#[test]
fn an_array_keeps_its_data_shape_and_dtype() {
    let x = matrix();
    assert_eq!(x.shape(), vec![2, 3]);
    assert_eq!((x.ndim(), x.size(), x.dtype(), x.itemsize(), x.nbytes()), (2, 6, Dtype::Float32, 4, 24));
    assert_eq!(x.to_vec::<f32>().unwrap(), vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let scalar = Array::from(7i32);
    assert_eq!((scalar.ndim(), scalar.dtype(), scalar.item::<i32>().unwrap()), (0, Dtype::Int32, 7));
    assert_eq!(Array::scalar(3u8).unwrap().item::<u8>().unwrap(), 3);
}

#[test]
fn every_element_type_round_trips() {
    assert_eq!(Array::from_slice(&[true, false], &[2]).unwrap().to_vec::<bool>().unwrap(), vec![true, false]);
    assert_eq!(Array::from_slice(&[1u16, 9], &[2]).unwrap().to_vec::<u16>().unwrap(), vec![1, 9]);
    assert_eq!(Array::from_slice(&[-1i64, 9], &[2]).unwrap().to_vec::<i64>().unwrap(), vec![-1, 9]);
    assert_eq!(Array::from_slice(&[0.5f64], &[1]).unwrap().to_vec::<f64>().unwrap(), vec![0.5]);
    let z = braid::Complex64 { re: 1.0, im: -2.0 };
    assert_eq!(Array::from_slice(&[z], &[1]).unwrap().item::<braid::Complex64>().unwrap(), z);
    let half = matrix().astype(Dtype::Float16).unwrap();
    assert_eq!(half.dtype(), Dtype::Float16);
    assert_eq!(half.astype(Dtype::Float32).unwrap().to_vec::<f32>().unwrap()[5], 6.0);
}

#[test]
fn a_clone_is_another_handle_to_the_same_node() {
    let x = &matrix() * 2.0;
    let y = x.clone();
    y.eval().unwrap();
    assert!(x.is_available(), "evaluating the clone evaluated the original");
}

#[test]
fn strided_and_broadcast_views_read_in_row_major_order() {
    let t = matrix().transpose().unwrap();
    assert_eq!(t.to_vec::<f32>().unwrap(), vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
    let b = ops::broadcast_to(&Array::from_slice(&[1.0f32, 2.0], &[2, 1]).unwrap(), &[2, 3]).unwrap();
    assert_eq!(b.to_vec::<f32>().unwrap(), vec![1.0, 1.0, 1.0, 2.0, 2.0, 2.0]);
    let s = ops::slice(&matrix(), &[0, 1], &[2, 3], &[1, 2]).unwrap();
    assert_eq!(s.to_vec::<f32>().unwrap(), vec![2.0, 5.0]);
}

#[test]
fn operators_follow_mlx() {
    let x = matrix();
    assert_eq!((&x + &x).to_vec::<f32>().unwrap(), vec![2.0, 4.0, 6.0, 8.0, 10.0, 12.0]);
    assert_eq!((&x - 1.0).to_vec::<f32>().unwrap()[0], 0.0);
    assert_eq!((10.0 - &x).to_vec::<f32>().unwrap()[0], 9.0);
    assert_eq!((&x * &x).to_vec::<f32>().unwrap()[2], 9.0);
    assert_eq!((&x / 2.0).to_vec::<f32>().unwrap()[0], 0.5);
    assert_eq!((&x % 4.0).to_vec::<f32>().unwrap()[4], 1.0);
    assert_eq!((-&x).to_vec::<f32>().unwrap()[0], -1.0);
    let i = Array::from_slice(&[1i32, 2], &[2]).unwrap();
    assert_eq!((&i * 3).dtype(), Dtype::Int32);
    assert_eq!((x.clone() + x).to_vec::<f32>().unwrap()[5], 12.0);
}

#[test]
fn the_core_ops_compute_what_mlx_computes() {
    let x = matrix();
    let product = x.matmul(&x.transpose().unwrap()).unwrap();
    assert_eq!(product.to_vec::<f32>().unwrap(), vec![14.0, 32.0, 32.0, 77.0]);
    assert_eq!(x.sum().unwrap().item::<f32>().unwrap(), 21.0);
    assert_eq!(x.mean().unwrap().item::<f32>().unwrap(), 3.5);
    assert_eq!(ops::sum_axis(&x, 1, false).unwrap().to_vec::<f32>().unwrap(), vec![6.0, 15.0]);
    assert_eq!(ops::argmax_axis(&x, 1, false).unwrap().to_vec::<u32>().unwrap(), vec![2, 2]);
    assert_eq!(x.reshape(&[3, 2]).unwrap().shape(), vec![3, 2]);
    assert_eq!(ops::transpose_axes(&x, &[1, 0]).unwrap().shape(), vec![3, 2]);

    let three = Array::from(3.0f32);
    let mask = ops::greater(&x, &three).unwrap();
    assert_eq!(mask.to_vec::<bool>().unwrap(), vec![false, false, false, true, true, true]);
    let picked = ops::where_(&mask, &x, &Array::from(0.0f32)).unwrap();
    assert_eq!(picked.to_vec::<f32>().unwrap(), vec![0.0, 0.0, 0.0, 4.0, 5.0, 6.0]);
    assert!(ops::equal(&x, &x).unwrap().to_vec::<bool>().unwrap().iter().all(|&b| b));

    let indices = Array::from_slice(&[2i32, 0], &[2]).unwrap();
    assert_eq!(ops::take(&x, &indices).unwrap().to_vec::<f32>().unwrap(), vec![3.0, 1.0]);
    assert_eq!(ops::take_axis(&x, &indices, 1).unwrap().to_vec::<f32>().unwrap(), vec![3.0, 1.0, 6.0, 4.0]);
    let joined = ops::concatenate_axis(&[x.clone(), x.clone()], 0).unwrap();
    assert_eq!(joined.shape(), vec![4, 3]);
    assert_eq!(ops::stack(&[x.clone(), x.clone()]).unwrap().shape(), vec![2, 2, 3]);
    let parts = ops::split(&x, 3, 1).unwrap();
    assert_eq!(parts.len(), 3);
    assert_eq!(parts[1].to_vec::<f32>().unwrap(), vec![2.0, 5.0]);

    let soft = ops::softmax_axis(&Array::from_slice(&[0.0f32, 0.0], &[2]).unwrap(), -1, false).unwrap();
    assert_close(&soft.to_vec::<f32>().unwrap(), &[0.5, 0.5]);
    assert_close(
        &ops::exp(&ops::log(&x).unwrap()).unwrap().to_vec::<f32>().unwrap(),
        &x.to_vec::<f32>().unwrap(),
    );
    assert!(ops::allclose(&x, &x, 1e-5, 1e-8, false).unwrap().item::<bool>().unwrap());
}

#[test]
fn display_prints_the_values() {
    let text = format!("{}", Array::from_slice(&[1i32, 2], &[2]).unwrap());
    assert!(text.contains('1') && text.contains('2'), "{}", text);
    assert!(format!("{:?}", matrix()).contains("[2, 3]"));
}

#[test]
fn devices_and_streams_describe_themselves() {
    let cpu = Device::cpu();
    assert!(cpu.is_available());
    assert_eq!(cpu.device_type().unwrap(), DeviceType::Cpu);
    assert_eq!(cpu.index().unwrap(), 0);
    assert_eq!(cpu.to_string(), "Device(cpu, 0)");
    assert_eq!(cpu.clone(), cpu);
    let stream = Stream::new(&cpu).unwrap();
    assert_eq!(stream.device().unwrap(), cpu);
    assert_eq!(stream.clone(), stream);
    assert!(stream.index().unwrap() >= 0);
    assert_ne!(Stream::new(&cpu).unwrap(), stream);
    assert!(stream.to_string().contains("cpu"));
    let on_stream = ops::add_device(&matrix(), &matrix(), &stream).unwrap();
    stream.synchronize().unwrap();
    assert_eq!(on_stream.to_vec::<f32>().unwrap()[0], 2.0);
    assert!(Device::default_device().is_ok());
}

#[test]
fn async_eval_is_waited_for_by_item() {
    let y = ops::sum(&(&matrix() * 3.0), false).unwrap();
    braid::async_eval([&y]).unwrap();
    assert_eq!(y.item::<f32>().unwrap(), 63.0);
}

fn temp_path(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("braid-rust-{}-{}", std::process::id(), name))
}

#[test]
fn npy_files_round_trip() {
    let path = temp_path("roundtrip.npy");
    io::save(&path, &matrix()).unwrap();
    let loaded = io::load(&path).unwrap();
    assert_eq!(loaded.shape(), vec![2, 3]);
    assert_eq!(loaded.to_vec::<f32>().unwrap(), matrix().to_vec::<f32>().unwrap());
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn safetensors_files_round_trip() {
    let path = temp_path("roundtrip.safetensors");
    let mut arrays = HashMap::new();
    arrays.insert("weight".to_string(), matrix());
    arrays.insert("bias".to_string(), Array::from_slice(&[7i32], &[1]).unwrap());
    let mut metadata = HashMap::new();
    metadata.insert("format".to_string(), "braid".to_string());
    io::save_safetensors(&path, &arrays, &metadata).unwrap();
    let (loaded, meta) = io::load_safetensors(&path).unwrap();
    assert_eq!(loaded.len(), 2);
    assert_eq!(loaded["weight"].to_vec::<f32>().unwrap(), matrix().to_vec::<f32>().unwrap());
    assert_eq!(loaded["bias"].to_vec::<i32>().unwrap(), vec![7]);
    assert_eq!(meta["format"], "braid");
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn version_and_memory_counters_answer() {
    assert_eq!(braid::version().unwrap().split('.').count(), 3);
    let _keep = ops::ones(&[1024], Dtype::Float32).unwrap();
    _keep.eval().unwrap();
    assert!(braid::memory::active_memory().unwrap() > 0);
}

#[test]
fn the_fast_ops_are_there() {
    let x = ops::ones(&[2, 4], Dtype::Float32).unwrap();
    let normed = braid::fast::rms_norm(&x, None, 1e-5).unwrap();
    assert_close(&normed.to_vec::<f32>().unwrap(), &[1.0; 8]);
}

#[test]
fn the_linalg_family_factors_on_a_cpu_stream() {
    let cpu = Stream::new(&Device::cpu()).unwrap();
    let a = Array::from_slice(&[4.0f32, 1.0, 2.0, 3.0], &[2, 2]).unwrap();
    let inv = braid::linalg::inv_device(&a, &cpu).unwrap();
    // [[4, 1], [2, 3]]^-1 = [[3, -1], [-2, 4]] / 10
    assert_close(&inv.to_vec::<f32>().unwrap(), &[0.3, -0.1, -0.2, 0.4]);
    let (q, r) = braid::linalg::qr_device(&a, &cpu).unwrap();
    assert_close(&ops::matmul(&q, &r).unwrap().to_vec::<f32>().unwrap(), &[4.0, 1.0, 2.0, 3.0]);
    let norm = braid::linalg::norm_l2(&Array::from_slice(&[3.0f32, 4.0], &[2]).unwrap(), None, false);
    assert_close(&norm.unwrap().to_vec::<f32>().unwrap(), &[5.0]);
}

#[test]
fn the_fft_family_transforms_and_inverts() {
    let x = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[4]).unwrap();
    let spectrum = braid::fft::rfft(&x, 4, -1, braid::FftNorm::Backward).unwrap();
    assert_eq!(spectrum.shape(), vec![3]);
    assert_eq!(spectrum.dtype(), Dtype::Complex64);
    let dc = braid::Complex64 { re: 10.0, im: 0.0 };
    assert_eq!(spectrum.to_vec::<braid::Complex64>().unwrap()[0], dc);
    let back = braid::fft::irfft_default_norm(&spectrum, 4, -1).unwrap();
    assert_close(&back.to_vec::<f32>().unwrap(), &[1.0, 2.0, 3.0, 4.0]);
    let ortho = braid::fft::rfft(&x, 4, -1, braid::FftNorm::Ortho).unwrap();
    assert_eq!(ortho.to_vec::<braid::Complex64>().unwrap()[0], braid::Complex64 { re: 5.0, im: 0.0 });
    let freqs = braid::fft::rfftfreq(4, 0.5).unwrap();
    assert_eq!(freqs.to_vec::<f32>().unwrap(), vec![0.0, 0.5, 1.0]);
}
