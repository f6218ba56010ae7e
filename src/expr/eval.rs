//! The stack machine that evaluates a compiled expression, and the
//! built-ins that need more than one line. No allocation: the stack is an
//! array of [`MAX_STACK`] values, which the compiler guarantees is enough.

use super::{EvalError, Grid, Host, Op, MAX_STACK};
use rand::RngExt;
use rand_chacha::ChaCha8Rng;

/// Whole numbers an f64 holds exactly: randint's ends must be within.
const EXACT: f64 = 9_007_199_254_740_992.0;

/// a^b; whole exponents by repeated multiplication (exact for powers of
/// two), others by `powf`.
pub(super) fn pow(a: f64, b: f64) -> f64 {
    if b.fract() == 0.0 && b.abs() <= 1024.0 {
        a.powi(b as i32)
    } else {
        a.powf(b)
    }
}

/// The k-th Fibonacci number (fib(0) = 0, fib(1) = 1); NaN for a k that is
/// not a whole number >= 0, infinity past what an f64 holds.
pub(super) fn fib(k: f64) -> f64 {
    if k.is_nan() || k < 0.0 || k.fract() != 0.0 {
        return f64::NAN;
    }
    if k > 1476.0 {
        return f64::INFINITY;
    }
    // Every value an f64 holds, made once: a call costs a lookup.
    static TABLE: std::sync::OnceLock<Vec<f64>> = std::sync::OnceLock::new();
    let t = TABLE.get_or_init(|| {
        let mut t = vec![0.0, 1.0];
        for i in 2..=1476 {
            t.push(t[i - 1] + t[i - 2]);
        }
        t
    });
    t[k as usize]
}

/// The standard normal distribution function.
pub(super) fn phi(z: f64) -> f64 {
    0.5 * libm::erfc(-z / std::f64::consts::SQRT_2)
}

fn whole(name: &str, v: f64) -> Result<f64, EvalError> {
    if v.is_nan() || v.fract() != 0.0 || v.abs() > EXACT {
        return Err(EvalError(format!(
            "{name} needs whole numbers between -2^53 and 2^53, got {v} (floor() or round() it)"
        )));
    }
    Ok(v)
}

fn randint(rng: &mut ChaCha8Rng, a: f64, b: f64) -> Result<f64, EvalError> {
    let (a, b) = (whole("randint", a)?, whole("randint", b)?);
    if a > b {
        return Err(EvalError(format!(
            "randint({a}, {b}): the first end is above the second"
        )));
    }
    // Unsigned draws for a range from 0 up, as the built-in windows draw.
    Ok(if a >= 0.0 {
        rng.random_range(a as u64..=b as u64) as f64
    } else {
        rng.random_range(a as i64..=b as i64) as f64
    })
}

fn uniform(rng: &mut ChaCha8Rng, grid: Grid, a: f64, b: f64) -> Result<f64, EvalError> {
    if !a.is_finite() || !b.is_finite() {
        return Err(EvalError(format!(
            "uniform({a}, {b}): both ends must be finite"
        )));
    }
    if b < a {
        return Err(EvalError(format!(
            "uniform({a}, {b}): the first end is above the second"
        )));
    }
    match grid {
        Grid::Continuous => Ok(a + (b - a) * rng.random::<f64>()),
        Grid::Steps(s) => {
            let (lo, hi) = ((a * s).round(), (b * s).round());
            if hi.abs() > 9.2e18 || lo.abs() > 9.2e18 {
                return Err(EvalError(format!(
                    "uniform({a}, {b}): more than 10^6 s, longer than any run"
                )));
            }
            // As the built-in policies draw: an empty range is its low
            // end, without a draw.
            let k = if hi <= lo {
                lo
            } else if lo >= 0.0 {
                rng.random_range(lo as u64..=hi as u64) as f64
            } else {
                rng.random_range(lo as i64..=hi as i64) as f64
            };
            Ok(k / s)
        }
    }
}

/// min and max that keep a NaN: a wait that is not a number is refused,
/// never hidden by a min or a max.
fn nan_min(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.min(b)
    }
}

fn nan_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.max(b)
    }
}

fn probability(name: &str, p: f64) -> Result<f64, EvalError> {
    if !(0.0..=1.0).contains(&p) {
        return Err(EvalError(format!(
            "{name}({p}): a probability is between 0 and 1"
        )));
    }
    Ok(p)
}

#[inline]
pub(super) fn run<H: Host>(
    code: &[Op],
    texts: &[Box<str>],
    vars: &[f64],
    mut rng: Option<&mut ChaCha8Rng>,
    grid: Grid,
    host: &mut H,
) -> Result<f64, EvalError> {
    // Only expressions read where draws are allowed draw, and those are
    // always given a stream.
    let no_stream = || EvalError("a draw without a random stream".into());
    let mut stack = [0.0f64; MAX_STACK];
    let mut sp = 0usize;
    let mut pc = 0usize;
    macro_rules! pop {
        () => {{
            sp -= 1;
            stack[sp]
        }};
    }
    macro_rules! push {
        ($v:expr) => {{
            stack[sp] = $v;
            sp += 1;
        }};
    }
    macro_rules! bin {
        ($f:expr) => {{
            let b = pop!();
            let a = pop!();
            push!($f(a, b));
        }};
    }
    let truth = |b: bool| if b { 1.0 } else { 0.0 };
    while pc < code.len() {
        let op = code[pc];
        pc += 1;
        match op {
            Op::Const(v) => push!(v),
            Op::Var(i) => push!(vars[i as usize]),
            Op::Neg => {
                let a = pop!();
                push!(-a)
            }
            Op::Not => {
                let a = pop!();
                push!(truth(a == 0.0))
            }
            Op::Truth => {
                let a = pop!();
                push!(truth(a != 0.0))
            }
            Op::Add => bin!(|a, b| a + b),
            Op::Sub => bin!(|a, b| a - b),
            Op::Mul => bin!(|a, b| a * b),
            Op::Div => bin!(|a, b| a / b),
            Op::Rem => bin!(|a: f64, b: f64| a % b),
            Op::Pow => bin!(pow),
            Op::Lt => bin!(|a, b| truth(a < b)),
            Op::Le => bin!(|a, b| truth(a <= b)),
            Op::Gt => bin!(|a, b| truth(a > b)),
            Op::Ge => bin!(|a, b| truth(a >= b)),
            Op::Eq => bin!(|a, b| truth(a == b)),
            Op::Ne => bin!(|a, b| truth(a != b)),
            Op::Min(n) => {
                let n = n as usize;
                let m = stack[sp - n..sp]
                    .iter()
                    .copied()
                    .fold(f64::INFINITY, nan_min);
                sp -= n;
                push!(m)
            }
            Op::Max(n) => {
                let n = n as usize;
                let m = stack[sp - n..sp]
                    .iter()
                    .copied()
                    .fold(f64::NEG_INFINITY, nan_max);
                sp -= n;
                push!(m)
            }
            Op::Unary(f) => {
                let a = pop!();
                push!(f(a))
            }
            Op::Binary(f) => bin!(f),
            Op::Clamp => {
                let hi = pop!();
                let lo = pop!();
                let x = pop!();
                push!(if x.is_nan() { x } else { x.max(lo).min(hi) })
            }
            Op::RandInt => {
                let b = pop!();
                let a = pop!();
                push!(randint(rng.as_deref_mut().ok_or_else(no_stream)?, a, b)?)
            }
            Op::Uniform => {
                let b = pop!();
                let a = pop!();
                push!(uniform(
                    rng.as_deref_mut().ok_or_else(no_stream)?,
                    grid,
                    a,
                    b
                )?)
            }
            Op::Bernoulli => {
                let p = probability("bernoulli", pop!())?;
                let u = rng.as_deref_mut().ok_or_else(no_stream)?.random::<f64>();
                push!(truth(u < p))
            }
            Op::Geometric => {
                let p = pop!();
                if !(1e-12..=1.0).contains(&p) {
                    return Err(EvalError(format!(
                        "geometric({p}): the probability of success is from 1e-12 to 1"
                    )));
                }
                let r = if p >= 1.0 {
                    0.0
                } else {
                    // Inverse CDF, as the built-in `geometric` policy draws.
                    let u = 1.0 - rng.as_deref_mut().ok_or_else(no_stream)?.random::<f64>();
                    (u.ln() / (1.0 - p).ln()).floor()
                };
                push!(r)
            }
            Op::JumpIfFalse(to) => {
                let c = pop!();
                if c.is_nan() {
                    return Err(EvalError("a condition is not a number (NaN)".into()));
                }
                if c == 0.0 {
                    pc = to as usize;
                }
            }
            Op::Jump(to) => pc = to as usize,
            Op::Host {
                id,
                numbers,
                first_text,
            } => {
                let n = numbers as usize;
                let args = &stack[sp - n..sp];
                // The host reads as many texts as its function takes.
                let v = host.call(id as usize, args, &texts[first_text as usize..])?;
                sp -= n;
                push!(v)
            }
        }
    }
    debug_assert_eq!(sp, 1);
    Ok(stack[0])
}
