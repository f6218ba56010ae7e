//! A syntax tree to the instructions `eval` runs: every name resolved to a
//! variable slot, a built-in or a host function, every call's argument count
//! and kinds checked, jumps for the lazy operators. Errors carry the column.

use super::parse::{BinOp, Node, Spanned, UnOp};
use super::{Builtin, Names, Op, Param, SyntaxError, BUILTINS, MAX_OPS, MAX_STACK};

pub(super) struct Compiler<'a> {
    pub src: &'a str,
    pub names: &'a Names<'a>,
    /// Per-expression variables (state) after the context's own.
    pub locals: &'a [String],
    pub code: Vec<Op>,
    pub texts: Vec<Box<str>>,
    /// Values on the stack now, and the most at any point.
    pub depth: usize,
    pub max_depth: usize,
    pub random: bool,
    pub used: Vec<bool>,
}

/// Levenshtein distance, for "did you mean".
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for j in 0..b.len() {
            let cur = row[j + 1];
            row[j + 1] = if ca == b[j] {
                prev
            } else {
                1 + prev.min(row[j]).min(row[j + 1])
            };
            prev = cur;
        }
    }
    row[b.len()]
}

/// The known name nearest to `name`, if near enough to be a typo.
pub fn nearest<'n>(name: &str, known: impl Iterator<Item = &'n str>) -> Option<&'n str> {
    known
        .map(|k| (distance(&name.to_lowercase(), &k.to_lowercase()), k))
        .filter(|(d, k)| {
            *d <= (k.chars().count() / 3).max(1) || k.starts_with(name) && name.len() >= 2
        })
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

impl Compiler<'_> {
    fn err(&self, column: usize, m: impl Into<String>) -> SyntaxError {
        SyntaxError::new(self.src, column, m.into())
    }

    fn emit(&mut self, op: Op, pushes: isize, column: usize) -> Result<(), SyntaxError> {
        self.code.push(op);
        if self.code.len() > MAX_OPS {
            return Err(self.err(
                column,
                format!("longer than the {MAX_OPS} operations an expression may take; split it or simplify it"),
            ));
        }
        self.depth = (self.depth as isize + pushes) as usize;
        self.max_depth = self.max_depth.max(self.depth);
        if self.max_depth > MAX_STACK {
            return Err(self.err(
                column,
                format!("holds more than {MAX_STACK} values at once; split the expression"),
            ));
        }
        Ok(())
    }

    fn all_names(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.names.vars.to_vec();
        v.extend(self.locals.iter().map(String::as_str));
        v.extend(BUILTINS.iter().map(|b| b.name));
        v.extend(self.names.funcs.iter().map(|f| f.name));
        v.extend(["true", "false", "pi"]);
        v
    }

    pub fn var_slot(&self, name: &str) -> Option<usize> {
        self.names.vars.iter().position(|v| *v == name).or_else(|| {
            self.locals
                .iter()
                .position(|v| v == name)
                .map(|i| i + self.names.vars.len())
        })
    }

    pub fn unknown(&self, column: usize, name: &str, what: &str) -> SyntaxError {
        let known = self.all_names();
        let hint = match nearest(name, known.iter().copied()) {
            Some(k) => format!("; did you mean `{k}`?"),
            None => {
                let mut vars: Vec<&str> = self.names.vars.to_vec();
                vars.extend(self.locals.iter().map(String::as_str));
                if vars.is_empty() {
                    String::new()
                } else {
                    format!("; the names here are {}", vars.join(", "))
                }
            }
        };
        self.err(column, format!("unknown {what} `{name}`{hint}"))
    }

    pub fn node(&mut self, e: &Spanned) -> Result<(), SyntaxError> {
        let col = e.column;
        match &e.node {
            Node::Num(v) => self.emit(Op::Const(*v), 1, col),
            Node::Text(s) => Err(self.err(
                col,
                format!("the text \"{s}\" can only be an argument of a function that names something (such as an event)"),
            )),
            Node::Name(name) => {
                if let Some(slot) = self.var_slot(name) {
                    self.used[slot] = true;
                    return self.emit(Op::Var(slot as u16), 1, col);
                }
                let v = match name.as_str() {
                    "true" => 1.0,
                    "false" => 0.0,
                    "pi" => std::f64::consts::PI,
                    _ => {
                        if BUILTINS.iter().any(|b| b.name == name)
                            || self.names.funcs.iter().any(|f| f.name == name)
                        {
                            return Err(self.err(col, format!("`{name}` is a function: write `{name}(...)`")));
                        }
                        return Err(self.unknown(col, name, "name"));
                    }
                };
                self.emit(Op::Const(v), 1, col)
            }
            Node::Unary(op, inner) => {
                self.node(inner)?;
                self.emit(
                    match op {
                        UnOp::Neg => Op::Neg,
                        UnOp::Not => Op::Not,
                    },
                    0,
                    col,
                )
            }
            Node::Binary(BinOp::And, a, b) => {
                // a && b: a ? (b != 0) : 0
                self.lazy(a, b, true, col)
            }
            Node::Binary(BinOp::Or, a, b) => self.lazy(a, b, false, col),
            Node::Binary(op, a, b) => {
                self.node(a)?;
                self.node(b)?;
                let op = match op {
                    BinOp::Add => Op::Add,
                    BinOp::Sub => Op::Sub,
                    BinOp::Mul => Op::Mul,
                    BinOp::Div => Op::Div,
                    BinOp::Rem => Op::Rem,
                    BinOp::Pow => Op::Pow,
                    BinOp::Lt => Op::Lt,
                    BinOp::Le => Op::Le,
                    BinOp::Gt => Op::Gt,
                    BinOp::Ge => Op::Ge,
                    BinOp::Eq => Op::Eq,
                    BinOp::Ne => Op::Ne,
                    BinOp::And | BinOp::Or => unreachable!("lazy above"),
                };
                self.emit(op, -1, col)
            }
            Node::Ternary(c, t, f) => self.choice(c, t, f, col),
            Node::Call(name, args) => self.call(name, args, col),
        }
    }

    /// `a && b` (and) or `a || b` (or), evaluating `b` only when needed.
    fn lazy(&mut self, a: &Spanned, b: &Spanned, and: bool, col: usize) -> Result<(), SyntaxError> {
        self.node(a)?;
        let jump = self.code.len();
        // Placeholder; patched below. Pops the condition.
        self.emit(Op::JumpIfFalse(0), -1, col)?;
        if and {
            self.node(b)?;
            self.emit(Op::Truth, 0, col)?;
            let over = self.code.len();
            self.emit(Op::Jump(0), -1, col)?;
            self.code[jump] = Op::JumpIfFalse(self.code.len() as u32);
            self.emit(Op::Const(0.0), 1, col)?;
            self.code[over] = Op::Jump(self.code.len() as u32);
        } else {
            self.emit(Op::Const(1.0), 1, col)?;
            let over = self.code.len();
            self.emit(Op::Jump(0), -1, col)?;
            self.code[jump] = Op::JumpIfFalse(self.code.len() as u32);
            self.node(b)?;
            self.emit(Op::Truth, 0, col)?;
            self.code[over] = Op::Jump(self.code.len() as u32);
        }
        Ok(())
    }

    fn choice(
        &mut self,
        c: &Spanned,
        t: &Spanned,
        f: &Spanned,
        col: usize,
    ) -> Result<(), SyntaxError> {
        self.node(c)?;
        let jump = self.code.len();
        self.emit(Op::JumpIfFalse(0), -1, col)?;
        self.node(t)?;
        let over = self.code.len();
        // The then-branch's value is on the stack; the else-branch starts
        // from the depth before it.
        self.emit(Op::Jump(0), -1, col)?;
        self.code[jump] = Op::JumpIfFalse(self.code.len() as u32);
        self.node(f)?;
        self.code[over] = Op::Jump(self.code.len() as u32);
        Ok(())
    }

    fn call(&mut self, name: &str, args: &[Spanned], col: usize) -> Result<(), SyntaxError> {
        if name == "if" {
            if args.len() != 3 {
                return Err(self.err(
                    col,
                    format!(
                        "if(condition, then, else) takes 3 arguments, not {}",
                        args.len()
                    ),
                ));
            }
            return self.choice(&args[0], &args[1], &args[2], col);
        }
        if let Some(b) = BUILTINS.iter().find(|b| b.name == name) {
            let ok = match b.arity {
                Some(k) => args.len() == k,
                None => args.len() >= 2,
            };
            if !ok {
                return Err(self.err(
                    col,
                    match b.arity {
                        Some(k) => format!(
                            "{} takes {k} argument{}, not {}",
                            b.signature,
                            if k == 1 { "" } else { "s" },
                            args.len()
                        ),
                        None => format!(
                            "{} takes 2 or more arguments, not {}",
                            b.signature,
                            args.len()
                        ),
                    },
                ));
            }
            if b.random && !self.names.random {
                return Err(self.err(
                    col,
                    format!("`{name}` draws at random, which is not allowed here (theory curves and checks are exact)"),
                ));
            }
            self.random |= b.random;
            for a in args {
                self.node(a)?;
            }
            let n = args.len();
            let op = match b.op {
                Builtin::Min => Op::Min(n as u16),
                Builtin::Max => Op::Max(n as u16),
                Builtin::Unary(f) => Op::Unary(f),
                Builtin::Binary(f) => Op::Binary(f),
                Builtin::Clamp => Op::Clamp,
                Builtin::RandInt => Op::RandInt,
                Builtin::Uniform => Op::Uniform,
                Builtin::Bernoulli => Op::Bernoulli,
                Builtin::Geometric => Op::Geometric,
            };
            return self.emit(op, 1 - n as isize, col);
        }
        // A name may be given at several arities (`metric(name)`,
        // `metric(name, group)`): the one of this call's, else the first
        // for the message.
        let funcs = || self.names.funcs.iter().enumerate();
        if let Some((id, f)) = funcs()
            .find(|(_, f)| f.name == name && f.params.len() == args.len())
            .or_else(|| funcs().find(|(_, f)| f.name == name))
        {
            if args.len() != f.params.len() {
                return Err(self.err(
                    col,
                    format!(
                        "{} takes {} argument{}, not {}",
                        f.signature,
                        f.params.len(),
                        if f.params.len() == 1 { "" } else { "s" },
                        args.len()
                    ),
                ));
            }
            let mut texts = Vec::new();
            let mut numbers = 0;
            for (a, p) in args.iter().zip(f.params) {
                match (p, &a.node) {
                    (Param::Text, Node::Text(s)) => texts.push(s.clone().into_boxed_str()),
                    (Param::Text, _) => {
                        return Err(self.err(
                            a.column,
                            format!(
                                "{}: this argument is a name in quotes, e.g. \"tx-start\"",
                                f.signature
                            ),
                        ))
                    }
                    (Param::Number, _) => {
                        self.node(a)?;
                        numbers += 1;
                    }
                }
            }
            let first_text = self.texts.len() as u32;
            self.texts.extend(texts);
            return self.emit(
                Op::Host {
                    id: id as u16,
                    numbers: numbers as u16,
                    first_text,
                },
                1 - numbers as isize,
                col,
            );
        }
        Err(self.unknown(col, name, "function"))
    }
}
