//! Arithmetic operators on arrays, as MLX's C++ operators: `&a + &b`, `a * 2.0`, `1.0 - &a`,
//! `-&a`. Scalars become 0-d arrays (f32 and f64 as float32, i32 as int32, as in MLX) and
//! broadcast. An operator cannot return a Result, so an invalid one (shapes that do not
//! broadcast) panics with braid's message; the functions of `ops` return it as `Err`.
use std::ops::{Add, Div, Mul, Neg, Rem, Sub};

use crate::{ops, Array};

fn expect(result: crate::Result<Array>) -> Array {
    result.unwrap_or_else(|e| panic!("{}", e))
}

macro_rules! binary {
    ($trait:ident, $method:ident, $op:path) => {
        impl<'a, 'b> $trait<&'b Array> for &'a Array {
            type Output = Array;
            fn $method(self, rhs: &'b Array) -> Array {
                expect($op(self, rhs))
            }
        }
        impl<'b> $trait<&'b Array> for Array {
            type Output = Array;
            fn $method(self, rhs: &'b Array) -> Array {
                expect($op(&self, rhs))
            }
        }
        impl<'a> $trait<Array> for &'a Array {
            type Output = Array;
            fn $method(self, rhs: Array) -> Array {
                expect($op(self, &rhs))
            }
        }
        impl $trait<Array> for Array {
            type Output = Array;
            fn $method(self, rhs: Array) -> Array {
                expect($op(&self, &rhs))
            }
        }
        binary!(@scalar $trait, $method, $op, f32);
        binary!(@scalar $trait, $method, $op, i32);
    };
    (@scalar $trait:ident, $method:ident, $op:path, $scalar:ty) => {
        impl<'a> $trait<$scalar> for &'a Array {
            type Output = Array;
            fn $method(self, rhs: $scalar) -> Array {
                expect($op(self, &Array::from(rhs)))
            }
        }
        impl $trait<$scalar> for Array {
            type Output = Array;
            fn $method(self, rhs: $scalar) -> Array {
                expect($op(&self, &Array::from(rhs)))
            }
        }
        impl<'b> $trait<&'b Array> for $scalar {
            type Output = Array;
            fn $method(self, rhs: &'b Array) -> Array {
                expect($op(&Array::from(self), rhs))
            }
        }
        impl $trait<Array> for $scalar {
            type Output = Array;
            fn $method(self, rhs: Array) -> Array {
                expect($op(&Array::from(self), &rhs))
            }
        }
    };
}

binary!(Add, add, ops::add);
binary!(Sub, sub, ops::subtract);
binary!(Mul, mul, ops::multiply);
binary!(Div, div, ops::divide);
binary!(Rem, rem, ops::remainder);

// f64 literals (`&a * 2.0` infers f64 where nothing says f32) become float32 scalars.
macro_rules! float64_scalar {
    ($trait:ident, $method:ident) => {
        impl<'a> $trait<f64> for &'a Array {
            type Output = Array;
            fn $method(self, rhs: f64) -> Array {
                $trait::$method(self, rhs as f32)
            }
        }
        impl $trait<f64> for Array {
            type Output = Array;
            fn $method(self, rhs: f64) -> Array {
                $trait::$method(self, rhs as f32)
            }
        }
        impl<'b> $trait<&'b Array> for f64 {
            type Output = Array;
            fn $method(self, rhs: &'b Array) -> Array {
                $trait::$method(self as f32, rhs)
            }
        }
        impl $trait<Array> for f64 {
            type Output = Array;
            fn $method(self, rhs: Array) -> Array {
                $trait::$method(self as f32, rhs)
            }
        }
    };
}
float64_scalar!(Add, add);
float64_scalar!(Sub, sub);
float64_scalar!(Mul, mul);
float64_scalar!(Div, div);
float64_scalar!(Rem, rem);

impl<'a> Neg for &'a Array {
    type Output = Array;
    fn neg(self) -> Array {
        expect(ops::negative(self))
    }
}

impl Neg for Array {
    type Output = Array;
    fn neg(self) -> Array {
        expect(ops::negative(&self))
    }
}
