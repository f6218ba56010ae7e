//! Text to a syntax tree: tokens with their columns, then a precedence
//! climber. Knows no names: resolving them is `compile`'s job.

use super::SyntaxError;

/// A node of the syntax tree, with the column (1-based, in characters) where
/// it starts, for errors.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Node {
    Num(f64),
    Text(String),
    Name(String),
    Unary(UnOp, Box<Spanned>),
    Binary(BinOp, Box<Spanned>, Box<Spanned>),
    /// cond ? then : else
    Ternary(Box<Spanned>, Box<Spanned>, Box<Spanned>),
    Call(String, Vec<Spanned>),
}

#[derive(Clone, Debug, PartialEq)]
pub(super) struct Spanned {
    pub node: Node,
    pub column: usize,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum UnOp {
    Neg,
    Not,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum BinOp {
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
    And,
    Or,
}

/// One `name = expression` of a statement list.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Assign {
    pub target: String,
    pub column: usize,
    pub value: Spanned,
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Num(f64),
    Text(String),
    Ident(String),
    /// An operator or punctuation, as written.
    Sym(&'static str),
    End,
}

struct Lexer {
    toks: Vec<(Tok, usize)>,
}

const SYMBOLS: [&str; 21] = [
    "**", "<=", ">=", "==", "!=", "&&", "||", "+", "-", "*", "/", "%", "^", "(", ")", ",", "?",
    ":", "<", ">", "!",
];

fn lex(src: &str) -> Result<Lexer, SyntaxError> {
    let chars: Vec<char> = src.chars().collect();
    let mut toks = Vec::new();
    let mut i = 0;
    let err = |col: usize, m: String| SyntaxError::new(src, col, m);
    while i < chars.len() {
        let c = chars[i];
        let col = i + 1;
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_digit()
            || (c == '.' && chars.get(i + 1).is_some_and(|d| d.is_ascii_digit()))
        {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.') {
                i += 1;
            }
            if i < chars.len() && (chars[i] == 'e' || chars[i] == 'E') {
                let mut j = i + 1;
                if j < chars.len() && (chars[j] == '+' || chars[j] == '-') {
                    j += 1;
                }
                if j < chars.len() && chars[j].is_ascii_digit() {
                    i = j;
                    while i < chars.len() && chars[i].is_ascii_digit() {
                        i += 1;
                    }
                }
            }
            let text: String = chars[start..i].iter().collect();
            if i < chars.len() && (chars[i].is_alphabetic() || chars[i] == '_') {
                let mut j = i;
                while j < chars.len() && (chars[j].is_alphanumeric() || chars[j] == '_') {
                    j += 1;
                }
                let unit: String = chars[i..j].iter().collect();
                return Err(err(
                    col,
                    format!("`{text}{unit}`: numbers here have no unit; the policy's `unit` gives it (write `{text}`)"),
                ));
            }
            let v: f64 = text
                .parse()
                .map_err(|_| err(col, format!("`{text}` is not a number")))?;
            toks.push((Tok::Num(v), col));
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            let tok = match word.as_str() {
                "and" => Tok::Sym("&&"),
                "or" => Tok::Sym("||"),
                "not" => Tok::Sym("!"),
                _ => Tok::Ident(word),
            };
            toks.push((tok, col));
        } else if c == '"' || c == '\'' {
            let quote = c;
            let mut text = String::new();
            i += 1;
            loop {
                match chars.get(i) {
                    None => return Err(err(col, "this text has no closing quote".into())),
                    Some(&q) if q == quote => {
                        i += 1;
                        break;
                    }
                    Some('\\') if matches!(chars.get(i + 1), Some(&q) if q == quote || q == '\\') =>
                    {
                        text.push(chars[i + 1]);
                        i += 2;
                    }
                    Some(&ch) => {
                        text.push(ch);
                        i += 1;
                    }
                }
            }
            toks.push((Tok::Text(text), col));
        } else {
            let rest: String = chars[i..chars.len().min(i + 2)].iter().collect();
            match SYMBOLS.iter().find(|s| rest.starts_with(**s)) {
                Some(s) => {
                    // `=` alone is assignment, handled by the statement reader.
                    toks.push((Tok::Sym(if *s == "**" { "^" } else { s }), col));
                    i += s.chars().count();
                }
                None if c == '=' || c == ';' => {
                    toks.push((Tok::Sym(if c == '=' { "=" } else { ";" }), col));
                    i += 1;
                }
                None if c == '&' || c == '|' => {
                    return Err(err(
                        col,
                        format!("`{c}` alone is not an operator; write `{c}{c}`"),
                    ));
                }
                None => return Err(err(col, format!("`{c}` is not part of the language"))),
            }
        }
    }
    toks.push((Tok::End, chars.len() + 1));
    Ok(Lexer { toks })
}

struct Parser<'s> {
    src: &'s str,
    toks: Vec<(Tok, usize)>,
    at: usize,
    /// How deep the parse is nested, bounded so that no input can exhaust
    /// the stack.
    depth: usize,
}

/// Nesting deeper than this is refused (parentheses, calls, operators).
const MAX_NESTING: usize = 64;

fn describe(t: &Tok) -> String {
    match t {
        Tok::Num(v) => format!("the number {v}"),
        Tok::Text(s) => format!("the text \"{s}\""),
        Tok::Ident(s) => format!("`{s}`"),
        Tok::Sym(s) => format!("`{s}`"),
        Tok::End => "the end".into(),
    }
}

impl<'s> Parser<'s> {
    fn peek(&self) -> &Tok {
        &self.toks[self.at].0
    }
    fn column(&self) -> usize {
        self.toks[self.at].1
    }
    fn next(&mut self) -> (Tok, usize) {
        let t = self.toks[self.at].clone();
        if self.at + 1 < self.toks.len() {
            self.at += 1;
        }
        t
    }
    fn err(&self, column: usize, m: impl Into<String>) -> SyntaxError {
        SyntaxError::new(self.src, column, m.into())
    }
    fn is(&self, s: &str) -> bool {
        matches!(self.peek(), Tok::Sym(x) if *x == s)
    }
    fn expect(&mut self, s: &str, what: &str) -> Result<(), SyntaxError> {
        if self.is(s) {
            self.next();
            Ok(())
        } else {
            Err(self.err(
                self.column(),
                format!("expected `{s}` {what}, found {}", describe(self.peek())),
            ))
        }
    }

    fn nest(&mut self) -> Result<(), SyntaxError> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(self.err(
                self.column(),
                format!("nested more than {MAX_NESTING} deep; split the expression"),
            ));
        }
        Ok(())
    }

    /// expression := or ( `?` expression `:` expression )?
    fn expression(&mut self) -> Result<Spanned, SyntaxError> {
        self.nest()?;
        let cond = self.binary(0)?;
        let out = if self.is("?") {
            self.next();
            let then = self.expression()?;
            self.expect(":", "between the two branches of `? :`")?;
            let other = self.expression()?;
            let column = cond.column;
            Spanned {
                node: Node::Ternary(Box::new(cond), Box::new(then), Box::new(other)),
                column,
            }
        } else {
            cond
        };
        self.depth -= 1;
        Ok(out)
    }

    fn binop(&self) -> Option<(BinOp, u8)> {
        let Tok::Sym(s) = self.peek() else {
            return None;
        };
        Some(match *s {
            "||" => (BinOp::Or, 1),
            "&&" => (BinOp::And, 2),
            "==" => (BinOp::Eq, 3),
            "!=" => (BinOp::Ne, 3),
            "<" => (BinOp::Lt, 4),
            "<=" => (BinOp::Le, 4),
            ">" => (BinOp::Gt, 4),
            ">=" => (BinOp::Ge, 4),
            "+" => (BinOp::Add, 5),
            "-" => (BinOp::Sub, 5),
            "*" => (BinOp::Mul, 6),
            "/" => (BinOp::Div, 6),
            "%" => (BinOp::Rem, 6),
            _ => return None,
        })
    }

    /// Left-associative binary operators of precedence at least `min`.
    fn binary(&mut self, min: u8) -> Result<Spanned, SyntaxError> {
        let mut left = self.unary()?;
        while let Some((op, prec)) = self.binop() {
            if prec < min {
                break;
            }
            self.next();
            self.nest()?;
            let right = self.binary(prec + 1)?;
            self.depth -= 1;
            let column = left.column;
            left = Spanned {
                node: Node::Binary(op, Box::new(left), Box::new(right)),
                column,
            };
        }
        Ok(left)
    }

    /// Prefix `-` and `!`, below `^`: -2^2 is -4.
    fn unary(&mut self) -> Result<Spanned, SyntaxError> {
        let column = self.column();
        let op = if self.is("-") {
            Some(UnOp::Neg)
        } else if self.is("!") {
            Some(UnOp::Not)
        } else if self.is("+") {
            self.next();
            return self.unary();
        } else {
            None
        };
        match op {
            Some(op) => {
                self.next();
                self.nest()?;
                let inner = self.unary()?;
                self.depth -= 1;
                Ok(Spanned {
                    node: Node::Unary(op, Box::new(inner)),
                    column,
                })
            }
            None => self.power(),
        }
    }

    /// `a ^ b`, right-associative: 2^3^2 is 2^9.
    fn power(&mut self) -> Result<Spanned, SyntaxError> {
        let base = self.primary()?;
        if self.is("^") {
            self.next();
            self.nest()?;
            let exp = self.unary()?;
            self.depth -= 1;
            let column = base.column;
            return Ok(Spanned {
                node: Node::Binary(BinOp::Pow, Box::new(base), Box::new(exp)),
                column,
            });
        }
        Ok(base)
    }

    fn primary(&mut self) -> Result<Spanned, SyntaxError> {
        let (tok, column) = self.next();
        let node = match tok {
            Tok::Num(v) => Node::Num(v),
            Tok::Text(s) => Node::Text(s),
            Tok::Ident(name) => {
                if self.is("(") {
                    self.next();
                    let mut args = Vec::new();
                    if !self.is(")") {
                        loop {
                            args.push(self.expression()?);
                            if self.is(",") {
                                self.next();
                            } else {
                                break;
                            }
                        }
                    }
                    self.expect(")", &format!("to close the arguments of `{name}(`"))?;
                    Node::Call(name, args)
                } else {
                    Node::Name(name)
                }
            }
            Tok::Sym("(") => {
                let inner = self.expression()?;
                self.expect(")", "to close `(`")?;
                return Ok(Spanned {
                    node: inner.node,
                    column,
                });
            }
            Tok::Sym("=") => {
                return Err(self.err(
                    column,
                    "`=` assigns, in a statement list; compare with `==`",
                ))
            }
            other => {
                return Err(self.err(
                    column,
                    format!(
                        "expected a number, a name or `(`, found {}",
                        describe(&other)
                    ),
                ))
            }
        };
        Ok(Spanned { node, column })
    }

    fn finish(&self) -> Result<(), SyntaxError> {
        match self.peek() {
            Tok::End => Ok(()),
            Tok::Sym("=") => Err(self.err(
                self.column(),
                "`=` assigns, in a statement list (`init`, `on_success`, `on_failure`); compare with `==`",
            )),
            t => Err(self.err(
                self.column(),
                format!("expected an operator or the end, found {}", describe(t)),
            )),
        }
    }
}

fn parser(src: &str) -> Result<Parser<'_>, SyntaxError> {
    let lexer = lex(src)?;
    Ok(Parser {
        src,
        toks: lexer.toks,
        at: 0,
        depth: 0,
    })
}

/// One expression, the whole text.
pub(super) fn expression(src: &str) -> Result<Spanned, SyntaxError> {
    let mut p = parser(src)?;
    if matches!(p.peek(), Tok::End) {
        return Err(p.err(1, "empty expression"));
    }
    let e = p.expression()?;
    p.finish()?;
    Ok(e)
}

/// `name = expression` statements separated by `;` (a trailing `;` is
/// allowed; an empty text is no statement).
pub(super) fn statements(src: &str) -> Result<Vec<Assign>, SyntaxError> {
    let mut p = parser(src)?;
    let mut out = Vec::new();
    loop {
        while p.is(";") {
            p.next();
        }
        if matches!(p.peek(), Tok::End) {
            return Ok(out);
        }
        let (tok, column) = p.next();
        let Tok::Ident(target) = tok else {
            return Err(p.err(
                column,
                format!(
                    "expected a name to assign (`state = ...`), found {}",
                    describe(&tok)
                ),
            ));
        };
        p.expect(
            "=",
            &format!("after `{target}` (a statement is `name = expression`)"),
        )?;
        let value = p.expression()?;
        out.push(Assign {
            target,
            column,
            value,
        });
        match p.peek() {
            Tok::End => return Ok(out),
            Tok::Sym(";") => {}
            t => {
                return Err(p.err(
                    p.column(),
                    format!("expected `;` between statements, found {}", describe(t)),
                ))
            }
        }
    }
}
