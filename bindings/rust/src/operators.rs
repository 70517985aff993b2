//! Arithmetic operators on arrays, as MLX's C++ operators: `&a + &b`, `a * 2.0`, `1.0 - &a`,
//! `-&a`. Scalars (f32, i32) become 0-d arrays of float32 or int32, as in MLX, and broadcast.
//! (No f64 operand: a literal like `2.0` then needs no annotation.) An operator cannot return
//! a Result, so an invalid one (shapes that do not broadcast) panics with braid's message; the
//! functions of `ops` return it as `Err`.
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

impl Neg for &Array {
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
