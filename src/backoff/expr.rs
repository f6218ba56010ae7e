//! Policies a scenario writes itself: a wait in the expression language
//! (`kind = "expr"`) with optional state kept across frames or calls, and
//! tabulated windows (`kind = "windows"`). Both worlds use them; each gives
//! the names it has (the bus: `observed`, `slot`; the service world:
//! `retry_after`).

use crate::engine::Time;
use crate::expr::{Expr, Grid, Names, NoHost, Statements, SyntaxError};
use rand_chacha::ChaCha8Rng;

/// The world a policy is written for, which decides the names it sees.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicyWorld {
    Bus,
    Service,
}

/// The bus's names, in the order their values are given.
pub const BUS_VARS: &[&str] = &["n", "prev", "observed", "slot"];
/// The service world's names.
pub const SERVICE_VARS: &[&str] = &["n", "prev", "retry_after"];
/// The most state variables a policy may declare.
pub const MAX_STATE: usize = 8;
/// The longest wait any run can have: 10^6 s in picoseconds.
const MAX_WAIT_PS: f64 = 1e18;

impl PolicyWorld {
    pub fn vars(self) -> &'static [&'static str] {
        match self {
            PolicyWorld::Bus => BUS_VARS,
            PolicyWorld::Service => SERVICE_VARS,
        }
    }

    /// What the wait expression may use: the world's names and draws.
    pub fn names(self) -> Names<'static> {
        Names {
            vars: self.vars(),
            funcs: &[],
            random: true,
        }
    }

    /// What the statements may use: the same names, no draws (a policy's
    /// state changes the same way whatever the stream).
    pub fn statement_names(self) -> Names<'static> {
        Names {
            vars: self.vars(),
            funcs: &[],
            random: false,
        }
    }
}

/// What a wait of 1 means.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum WaitUnit {
    /// Slot times (the medium's, or a service group's `slot`).
    Slots,
    /// A time unit, as picoseconds per unit: 1e12 for "s", 1e9 "ms", 1e6 "us".
    Time(f64),
}

/// A policy written as expressions.
#[derive(Clone, Debug, PartialEq)]
pub struct ExprPolicy {
    pub world: PolicyWorld,
    /// The wait after the n-th failure of the current frame or call.
    pub wait: Expr,
    /// Run once per station (client) before its first frame (call).
    pub init: Statements,
    /// Run after each success, and after each failure, before the wait (or
    /// the discard) that follows it.
    pub on_success: Statements,
    pub on_failure: Statements,
    /// The state variables `init` declares.
    pub state: Vec<String>,
    pub unit: WaitUnit,
    /// As the scenario wrote it: "slots", "s", "ms", "us".
    pub unit_name: String,
    pub attempt_limit: u32,
}

/// Which of a policy's texts an error is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicyKey {
    Wait,
    Init,
    OnSuccess,
    OnFailure,
}

impl PolicyKey {
    pub fn key(self) -> &'static str {
        match self {
            PolicyKey::Wait => "wait",
            PolicyKey::Init => "init",
            PolicyKey::OnSuccess => "on_success",
            PolicyKey::OnFailure => "on_failure",
        }
    }
}

/// A wait a policy cannot give: out of its domain, or not a wait.
#[derive(Clone, Debug, PartialEq)]
pub struct PolicyFault {
    pub n: u32,
    pub message: String,
}

impl ExprPolicy {
    /// Reads and checks the texts; the error names which text it is in.
    #[allow(clippy::too_many_arguments)] // the policy's keys, one each
    pub fn read(
        world: PolicyWorld,
        wait: &str,
        init: &str,
        on_success: &str,
        on_failure: &str,
        unit: WaitUnit,
        unit_name: &str,
        attempt_limit: u32,
    ) -> Result<ExprPolicy, (PolicyKey, SyntaxError)> {
        let stmt_names = world.statement_names();
        let state = Statements::declared(init, &stmt_names).map_err(|e| (PolicyKey::Init, e))?;
        if state.len() > MAX_STATE {
            return Err((
                PolicyKey::Init,
                SyntaxError {
                    column: 1,
                    message: format!(
                        "declares {} state variables; at most {MAX_STATE}",
                        state.len()
                    ),
                    text: init.to_string(),
                },
            ));
        }
        let read = |text: &str, key: PolicyKey| {
            Statements::parse(text, &stmt_names, &state).map_err(|e| (key, e))
        };
        Ok(ExprPolicy {
            world,
            wait: Expr::parse_with(wait, &world.names(), &state)
                .map_err(|e| (PolicyKey::Wait, e))?,
            init: read(init, PolicyKey::Init)?,
            on_success: read(on_success, PolicyKey::OnSuccess)?,
            on_failure: read(on_failure, PolicyKey::OnFailure)?,
            state,
            unit,
            unit_name: unit_name.to_string(),
            attempt_limit,
        })
    }

    /// Whether draws depend on anything but n (state, or the previous wait).
    pub fn keeps_state(&self) -> bool {
        !self.state.is_empty() || self.wait.uses(1)
    }

    /// Picoseconds per unit of the wait.
    pub fn ps_per_unit(&self, slot: Time) -> f64 {
        match self.unit {
            WaitUnit::Slots => slot as f64,
            WaitUnit::Time(ps) => ps,
        }
    }

    /// The state before the first frame: `init` run on zeros.
    pub fn initial_state(&self) -> Box<[f64]> {
        if self.state.is_empty() {
            return Box::default();
        }
        let k = self.world.vars().len();
        let mut vars = vec![0.0; k + self.state.len()];
        // Statements draw nothing and call no host: they cannot fail.
        let _ = self
            .init
            .run(&mut vars, None, Grid::Continuous, &mut NoHost);
        vars[k..].into()
    }

    /// The values the expressions read: the world's names, then the state.
    fn values(&self, state: &[f64], n: u32, prev_ps: Option<Time>, c: &Context) -> [f64; 16] {
        let mut v = [0.0; 16];
        let unit = self.ps_per_unit(c.slot);
        v[0] = n as f64;
        v[1] = prev_ps.map_or(0.0, |p| p as f64 / unit);
        let k = match self.world {
            PolicyWorld::Bus => {
                v[2] = c.observed as f64;
                v[3] = c.slot as f64 / 1e6;
                4
            }
            PolicyWorld::Service => {
                v[2] = c.retry_after as f64 / 1e12;
                3
            }
        };
        v[k..k + state.len()].copy_from_slice(state);
        v
    }

    /// Runs `on_success` or `on_failure` on the state.
    pub fn update(
        &self,
        success: bool,
        state: &mut [f64],
        n: u32,
        prev_ps: Option<Time>,
        c: &Context,
    ) {
        let stmts = if success {
            &self.on_success
        } else {
            &self.on_failure
        };
        if stmts.is_empty() {
            return;
        }
        let mut v = self.values(state, n, prev_ps, c);
        let k = self.world.vars().len();
        let _ = stmts.run(
            &mut v[..k + state.len()],
            None,
            Grid::Continuous,
            &mut NoHost,
        );
        state.copy_from_slice(&v[k..k + state.len()]);
    }

    /// The wait after the n-th failure, in picoseconds, and its value in
    /// the policy's unit.
    pub fn wait_ps(
        &self,
        state: &[f64],
        n: u32,
        prev_ps: Option<Time>,
        c: &Context,
        rng: &mut ChaCha8Rng,
    ) -> Result<(Time, f64), PolicyFault> {
        let v = self.values(state, n, prev_ps, c);
        let unit = self.ps_per_unit(c.slot);
        let k = self.world.vars().len() + state.len();
        let w = self
            .wait
            .eval(&v[..k], Some(rng), Grid::Steps(unit), &mut NoHost)
            .map_err(|e| PolicyFault { n, message: e.0 })?;
        let ps = w * unit;
        if w.is_nan() || w < 0.0 || !w.is_finite() || ps > MAX_WAIT_PS {
            let why = if w.is_nan() {
                "not a number".to_string()
            } else if w < 0.0 {
                "negative".to_string()
            } else {
                "longer than any run (10^6 s)".to_string()
            };
            return Err(PolicyFault {
                n,
                message: format!(
                    "the wait is {w} {}, {why}; a wait must be a finite number >= 0",
                    self.unit_name
                ),
            });
        }
        Ok((ps.round() as Time, w))
    }
}

/// What a draw may read besides n and the state.
#[derive(Clone, Copy, Debug, Default)]
pub struct Context {
    /// The slot time, picoseconds (0 where the world has none).
    pub slot: Time,
    /// Bus: collisions observed on the channel since its last success.
    pub observed: u64,
    /// Service: the server's Retry-After, picoseconds (0 when none).
    pub retry_after: Time,
}

/// A table of windows in slots: the n-th failure draws r uniform on
/// 0..w-1, w the n-th window; past the table, the last one again, or from
/// the start with `repeat`.
#[derive(Clone, Debug, PartialEq)]
pub struct Windows {
    pub windows: Vec<u64>,
    pub repeat: bool,
    pub attempt_limit: u32,
}

impl Windows {
    pub fn window(&self, n: u32) -> u64 {
        let i = n.max(1) as usize - 1;
        let len = self.windows.len();
        if i < len {
            self.windows[i]
        } else if self.repeat {
            self.windows[i % len]
        } else {
            self.windows[len - 1]
        }
    }
}
