//! The expression language every user-written formula is written in:
//! backoff policies (`kind = "expr"`), theory curves on charts, and lesson
//! questions and checks. One language, checked once when a file is read and
//! evaluated many times, fast, without allocating.
//!
//! It knows nothing of Ethernet or services. A context (a world's policy, a
//! chart, a lesson) says which variables an expression may read and which
//! host functions it may call ([`Names`]); evaluation takes the variables'
//! values in that order, a random stream, and the host ([`Host`]).
//!
//! The language (docs/expressions.md is the user's reference): numbers
//! (f64), `+ - * / %`, `^` (power, right-associative; `**` also), comparisons
//! `< <= > >= == !=` giving 1 or 0, `&&`/`and`, `||`/`or`, `!`/`not`,
//! `c ? a : b` and `if(c, a, b)` (only the branch taken is evaluated, so only
//! its draws are made), the built-ins of [`BUILTINS`], and text in quotes as
//! an argument of host functions that name something. Statements
//! (`init`, `on_success`, `on_failure`) are `name = expression` separated by
//! `;`.
//!
//! Bounded by construction: there are no loops, calls of user functions or
//! recursion, so an evaluation runs at most [`MAX_OPS`] instructions and
//! holds at most [`MAX_STACK`] values; a text that would need more is refused
//! when it is read. Deterministic: every draw comes from the stream handed
//! over, in the order the instructions make them.

mod compile;
mod eval;
mod parse;

use compile::Compiler;
use rand_chacha::ChaCha8Rng;
use std::fmt;

pub use compile::nearest;

/// The most instructions one expression compiles to.
pub const MAX_OPS: usize = 4096;
/// The most values an evaluation holds at once.
pub const MAX_STACK: usize = 64;
/// The most statements a statement list holds.
pub const MAX_STATEMENTS: usize = 64;

/// A text that is not a valid expression here: where and why.
#[derive(Clone, Debug, PartialEq)]
pub struct SyntaxError {
    /// 1-based, in characters.
    pub column: usize,
    pub message: String,
    /// The text, for the pointer under it.
    pub text: String,
}

impl SyntaxError {
    fn new(text: &str, column: usize, message: String) -> Self {
        SyntaxError {
            column,
            message,
            text: text.to_string(),
        }
    }
}

impl fmt::Display for SyntaxError {
    /// "column C: message", then the text and a caret under the column.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A long text is shown around the column only.
        const SHOWN: usize = 60;
        let chars: Vec<char> = self
            .text
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        let at = self.column.saturating_sub(1).min(chars.len());
        let from = at.saturating_sub(SHOWN / 2);
        let to = (from + SHOWN).min(chars.len());
        let mut shown: String = chars[from..to].iter().collect();
        let mut caret = at - from;
        if from > 0 {
            shown.insert_str(0, "...");
            caret += 3;
        }
        if to < chars.len() {
            shown.push_str("...");
        }
        write!(
            f,
            "column {}: {}\n    {}\n    {}^",
            self.column,
            self.message,
            shown,
            " ".repeat(caret)
        )
    }
}

impl std::error::Error for SyntaxError {}

/// An evaluation that has no number to give: a draw asked with arguments
/// out of its domain, or a host function that cannot answer.
#[derive(Clone, Debug, PartialEq)]
pub struct EvalError(pub String);

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for EvalError {}

/// What an argument of a host function is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Param {
    Number,
    /// A text in quotes, written literally (an event's name, a metric's).
    Text,
}

/// A function a context adds to the language.
#[derive(Clone, Copy, Debug)]
pub struct HostFn {
    pub name: &'static str,
    pub params: &'static [Param],
    /// How it is written, for errors: `event_time(event, station, nth)`.
    pub signature: &'static str,
}

/// What an expression may read in one context.
#[derive(Clone, Copy, Debug)]
pub struct Names<'a> {
    /// Variable names, in the order of the values evaluation is given.
    pub vars: &'a [&'a str],
    pub funcs: &'a [HostFn],
    /// Whether the random functions may be used (a stream is handed over).
    pub random: bool,
}

impl Names<'_> {
    /// Variables only, no draws, no host functions.
    pub const fn exact<'a>(vars: &'a [&'a str]) -> Names<'a> {
        Names {
            vars,
            funcs: &[],
            random: false,
        }
    }
}

/// Answers a context's host functions.
pub trait Host {
    fn call(&mut self, id: usize, numbers: &[f64], texts: &[Box<str>]) -> Result<f64, EvalError>;
}

/// The host of contexts without host functions.
pub struct NoHost;

impl Host for NoHost {
    fn call(&mut self, _: usize, _: &[f64], _: &[Box<str>]) -> Result<f64, EvalError> {
        Err(EvalError("no host functions here".into()))
    }
}

/// How `uniform(a, b)` draws: on a grid of `steps_per_unit` steps (a
/// backoff's picoseconds per unit of its wait, so that a drawn time is a
/// whole number of picoseconds, as the built-in policies draw them), or
/// continuously.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Grid {
    Continuous,
    Steps(f64),
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum Builtin {
    Min,
    Max,
    Unary(fn(f64) -> f64),
    Binary(fn(f64, f64) -> f64),
    Clamp,
    RandInt,
    Uniform,
    Bernoulli,
    Geometric,
}

/// A built-in function: its name, how it is written, its argument count
/// (None: two or more), whether it draws, and what it does in one line.
pub struct BuiltinFn {
    pub name: &'static str,
    pub signature: &'static str,
    pub arity: Option<usize>,
    pub random: bool,
    pub doc: &'static str,
    pub(crate) op: Builtin,
}

const fn b(
    name: &'static str,
    signature: &'static str,
    arity: Option<usize>,
    random: bool,
    doc: &'static str,
    op: Builtin,
) -> BuiltinFn {
    BuiltinFn {
        name,
        signature,
        arity,
        random,
        doc,
        op,
    }
}

/// The built-in functions (`if(c, a, b)` is syntax, evaluated lazily).
pub const BUILTINS: &[BuiltinFn] = &[
    b(
        "min",
        "min(a, b, ...)",
        None,
        false,
        "the smallest argument",
        Builtin::Min,
    ),
    b(
        "max",
        "max(a, b, ...)",
        None,
        false,
        "the largest argument",
        Builtin::Max,
    ),
    b(
        "pow",
        "pow(a, b)",
        Some(2),
        false,
        "a to the power b (as a ^ b)",
        Builtin::Binary(eval::pow),
    ),
    b(
        "floor",
        "floor(x)",
        Some(1),
        false,
        "the largest whole number <= x",
        Builtin::Unary(f64::floor),
    ),
    b(
        "ceil",
        "ceil(x)",
        Some(1),
        false,
        "the smallest whole number >= x",
        Builtin::Unary(f64::ceil),
    ),
    b(
        "round",
        "round(x)",
        Some(1),
        false,
        "the nearest whole number, halves away from zero",
        Builtin::Unary(f64::round),
    ),
    b(
        "abs",
        "abs(x)",
        Some(1),
        false,
        "|x|",
        Builtin::Unary(f64::abs),
    ),
    b(
        "exp",
        "exp(x)",
        Some(1),
        false,
        "e^x",
        Builtin::Unary(f64::exp),
    ),
    b(
        "ln",
        "ln(x)",
        Some(1),
        false,
        "the natural logarithm",
        Builtin::Unary(f64::ln),
    ),
    b(
        "log2",
        "log2(x)",
        Some(1),
        false,
        "the base-2 logarithm",
        Builtin::Unary(f64::log2),
    ),
    b(
        "log10",
        "log10(x)",
        Some(1),
        false,
        "the base-10 logarithm",
        Builtin::Unary(f64::log10),
    ),
    b(
        "sqrt",
        "sqrt(x)",
        Some(1),
        false,
        "the square root",
        Builtin::Unary(f64::sqrt),
    ),
    b(
        "fib",
        "fib(k)",
        Some(1),
        false,
        "the k-th Fibonacci number: fib(0) = 0, fib(1) = fib(2) = 1, fib(3) = 2, ...",
        Builtin::Unary(eval::fib),
    ),
    b(
        "phi",
        "phi(z)",
        Some(1),
        false,
        "the standard normal distribution function P(Z <= z)",
        Builtin::Unary(eval::phi),
    ),
    b(
        "clamp",
        "clamp(x, lo, hi)",
        Some(3),
        false,
        "x limited to [lo, hi]",
        Builtin::Clamp,
    ),
    b(
        "randint",
        "randint(a, b)",
        Some(2),
        true,
        "a whole number drawn uniformly from a..b, both ends included",
        Builtin::RandInt,
    ),
    b(
        "uniform",
        "uniform(a, b)",
        Some(2),
        true,
        "a number drawn uniformly from [a, b] (a backoff's waits on its picosecond grid)",
        Builtin::Uniform,
    ),
    b(
        "bernoulli",
        "bernoulli(p)",
        Some(1),
        true,
        "1 with probability p, else 0",
        Builtin::Bernoulli,
    ),
    b(
        "geometric",
        "geometric(p)",
        Some(1),
        true,
        "failures before the first success of trials with probability p: 0, 1, 2, ...",
        Builtin::Geometric,
    ),
];

/// One instruction of a compiled expression (a stack machine).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Op {
    Const(f64),
    Var(u16),
    Neg,
    Not,
    /// x != 0 as 1 or 0.
    Truth,
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Pow,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    Min(u16),
    Max(u16),
    Unary(fn(f64) -> f64),
    Binary(fn(f64, f64) -> f64),
    Clamp,
    RandInt,
    Uniform,
    Bernoulli,
    Geometric,
    /// Pops the condition; jumps when it is 0.
    JumpIfFalse(u32),
    Jump(u32),
    Host {
        id: u16,
        numbers: u16,
        first_text: u32,
    },
}

/// A checked expression, ready to evaluate.
#[derive(Clone)]
pub struct Expr {
    text: String,
    code: Box<[Op]>,
    texts: Box<[Box<str>]>,
    random: bool,
    /// Which variable slots it reads.
    used: Box<[bool]>,
}

impl fmt::Debug for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Expr({:?})", self.text)
    }
}

impl PartialEq for Expr {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Expr {
    /// Reads and checks `text` against the names of its context.
    pub fn parse(text: &str, names: &Names) -> Result<Expr, SyntaxError> {
        Self::parse_with(text, names, &[])
    }

    /// As [`Expr::parse`], with per-expression variables (a policy's state)
    /// after the context's own.
    pub fn parse_with(text: &str, names: &Names, locals: &[String]) -> Result<Expr, SyntaxError> {
        let tree = parse::expression(text)?;
        Self::compile_node(text, text, &tree, names, locals)
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether an evaluation draws from the stream.
    pub fn is_random(&self) -> bool {
        self.random
    }

    /// Whether it reads variable slot `i`.
    pub fn uses(&self, i: usize) -> bool {
        self.used.get(i).copied().unwrap_or(false)
    }

    /// Each host function it calls: the function's index in the context's
    /// `funcs` and its text arguments, in the order written, so that a
    /// context can check the texts (an event's name, a metric's) when the
    /// expression is read rather than when it runs.
    pub fn host_calls(&self, names: &Names) -> Vec<(usize, Vec<&str>)> {
        self.code
            .iter()
            .filter_map(|op| match *op {
                Op::Host { id, first_text, .. } => {
                    let f = names.funcs.get(id as usize)?;
                    let k = f.params.iter().filter(|p| **p == Param::Text).count();
                    let first = first_text as usize;
                    let texts = self.texts.get(first..first + k)?;
                    Some((id as usize, texts.iter().map(|t| &**t).collect()))
                }
                _ => None,
            })
            .collect()
    }

    /// The value, with `vars` in the order of the context's names (then its
    /// locals), drawing from `rng`.
    #[inline]
    pub fn eval<H: Host>(
        &self,
        vars: &[f64],
        rng: Option<&mut ChaCha8Rng>,
        grid: Grid,
        host: &mut H,
    ) -> Result<f64, EvalError> {
        eval::run(&self.code, &self.texts, vars, rng, grid, host)
    }

    /// The value of an expression that draws nothing and calls no host.
    pub fn value(&self, vars: &[f64]) -> Result<f64, EvalError> {
        self.eval(vars, None, Grid::Continuous, &mut NoHost)
    }

    /// As [`Expr::value`] with a host.
    pub fn value_with<H: Host>(&self, vars: &[f64], host: &mut H) -> Result<f64, EvalError> {
        self.eval(vars, None, Grid::Continuous, host)
    }
}

/// `name = expression` statements run in order, each assigning one of the
/// expression's own variables (a policy's state).
#[derive(Clone, Debug, PartialEq)]
pub struct Statements {
    text: String,
    /// (slot among all variables, its value).
    assigns: Vec<(usize, Expr)>,
}

impl Statements {
    /// The names a statement list assigns, in first-assignment order (an
    /// `init` declares a policy's state variables this way). Names the
    /// context already has are refused.
    pub fn declared(text: &str, names: &Names) -> Result<Vec<String>, SyntaxError> {
        let list = parse::statements(text)?;
        let mut out: Vec<String> = Vec::new();
        for a in &list {
            if names.vars.contains(&a.target.as_str())
                || BUILTINS.iter().any(|b| b.name == a.target)
                || names.funcs.iter().any(|f| f.name == a.target)
                || ["if", "true", "false", "pi"].contains(&a.target.as_str())
            {
                return Err(SyntaxError::new(
                    text,
                    a.column,
                    format!(
                        "`{}` is given by the simulator and cannot be assigned; name the state something else (e.g. `state`, `w`)",
                        a.target
                    ),
                ));
            }
            if !out.contains(&a.target) {
                out.push(a.target.clone());
                // Enough to refuse: callers allow fewer.
                if out.len() > 16 {
                    return Err(SyntaxError::new(
                        text,
                        a.column,
                        "declares too many state variables".into(),
                    ));
                }
            }
        }
        Ok(out)
    }

    /// Reads a statement list whose targets must be among `locals`.
    pub fn parse(text: &str, names: &Names, locals: &[String]) -> Result<Statements, SyntaxError> {
        let list = parse::statements(text)?;
        if let Some(a) = list.get(MAX_STATEMENTS) {
            return Err(SyntaxError::new(
                text,
                a.column,
                format!("more than {MAX_STATEMENTS} statements; a policy's state needs few"),
            ));
        }
        let mut assigns = Vec::new();
        let mut ops = 0;
        for a in list {
            let Some(i) = locals.iter().position(|l| *l == a.target) else {
                let hint = match nearest(&a.target, locals.iter().map(String::as_str)) {
                    Some(k) => format!("; did you mean `{k}`?"),
                    None if locals.is_empty() => {
                        "; declare state in `init`, e.g. init = \"state = 0\"".into()
                    }
                    None => format!("; the state declared in `init` is {}", locals.join(", ")),
                };
                return Err(SyntaxError::new(
                    text,
                    a.column,
                    format!("`{}` is not a state variable{hint}", a.target),
                ));
            };
            // Compile the right-hand side against the whole text so that
            // columns point into what the user wrote.
            let sub = Expr::compile_node(text, "", &a.value, names, locals)?;
            ops += sub.code.len();
            if ops > MAX_OPS {
                return Err(SyntaxError::new(
                    text,
                    a.value.column,
                    format!("the statements take more than the {MAX_OPS} operations a text may take; simplify them"),
                ));
            }
            assigns.push((names.vars.len() + i, sub));
        }
        Ok(Statements {
            text: text.to_string(),
            assigns,
        })
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn is_empty(&self) -> bool {
        self.assigns.is_empty()
    }

    pub fn is_random(&self) -> bool {
        self.assigns.iter().any(|(_, e)| e.is_random())
    }

    /// Runs the statements, updating `vars` (the context's values, then the
    /// locals) in place.
    pub fn run<H: Host>(
        &self,
        vars: &mut [f64],
        mut rng: Option<&mut ChaCha8Rng>,
        grid: Grid,
        host: &mut H,
    ) -> Result<(), EvalError> {
        for (slot, e) in &self.assigns {
            let v = e.eval(vars, rng.as_deref_mut(), grid, host)?;
            vars[*slot] = v;
        }
        Ok(())
    }
}

impl Expr {
    /// Compiles `tree`, a part of `text` (for the columns of errors),
    /// keeping `stored` as its text.
    fn compile_node(
        text: &str,
        stored: &str,
        tree: &parse::Spanned,
        names: &Names,
        locals: &[String],
    ) -> Result<Expr, SyntaxError> {
        let mut c = Compiler {
            src: text,
            names,
            locals,
            code: Vec::new(),
            texts: Vec::new(),
            depth: 0,
            max_depth: 0,
            random: false,
            used: vec![false; names.vars.len() + locals.len()],
        };
        c.node(tree)?;
        Ok(Expr {
            text: stored.to_string(),
            code: c.code.into(),
            texts: c.texts.into(),
            random: c.random,
            used: c.used.into(),
        })
    }
}

#[cfg(test)]
mod tests;
