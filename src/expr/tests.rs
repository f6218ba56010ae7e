use super::*;
use rand::{RngExt, SeedableRng};

const VARS: &[&str] = &["n", "prev", "x"];

fn names() -> Names<'static> {
    Names {
        vars: VARS,
        funcs: &[],
        random: true,
    }
}

fn val(text: &str, vars: &[f64]) -> f64 {
    let e = Expr::parse(text, &names()).unwrap_or_else(|e| panic!("{e}"));
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    e.eval(vars, Some(&mut rng), Grid::Continuous, &mut NoHost)
        .unwrap()
}

fn err(text: &str) -> SyntaxError {
    Expr::parse(text, &names()).expect_err(text)
}

#[test]
fn arithmetic_precedence_and_associativity() {
    let v = [3.0, 0.0, 0.5];
    assert_eq!(val("1 + 2 * 3", &v), 7.0);
    assert_eq!(val("(1 + 2) * 3", &v), 9.0);
    assert_eq!(val("2 ^ 3 ^ 2", &v), 512.0);
    assert_eq!(val("2 ** 10", &v), 1024.0);
    assert_eq!(val("-2 ^ 2", &v), -4.0);
    assert_eq!(val("10 - 4 - 3", &v), 3.0);
    assert_eq!(val("7 % 4", &v), 3.0);
    assert_eq!(val("n * x", &v), 1.5);
    assert_eq!(val("1 < 2 && 3 >= 3", &v), 1.0);
    assert_eq!(val("1 > 2 || 0", &v), 0.0);
    assert_eq!(val("not (n == 3) or x != 0.5", &v), 0.0);
    assert_eq!(val("n > 2 ? 10 : 20", &v), 10.0);
    assert_eq!(val("n > 5 ? 10 : n > 2 ? 30 : 20", &v), 30.0);
    assert_eq!(val("if(n == 3, 1, 2)", &v), 1.0);
    assert_eq!(val("min(4, n, 9)", &v), 3.0);
    assert_eq!(val("max(4, n, 9)", &v), 9.0);
    assert_eq!(val("clamp(12, 0, 10)", &v), 10.0);
    assert_eq!(val("pow(2, min(n, 10)) - 1", &v), 7.0);
    assert_eq!(val("1e3 + .5", &v), 1000.5);
    assert_eq!(
        val("floor(2.7) + ceil(2.2) + round(2.5) + abs(-1)", &v),
        9.0
    );
    assert!((val("x * exp(-2 * x)", &v) - 0.5 * (-1.0f64).exp()).abs() < 1e-15);
    assert!((val("phi(1.959963984540054)", &v) - 0.975).abs() < 1e-12);
}

#[test]
fn fibonacci_is_exact() {
    let fibs: Vec<f64> = (0..12).map(|k| fib(k as f64)).collect();
    assert_eq!(fibs, [0., 1., 1., 2., 3., 5., 8., 13., 21., 34., 55., 89.]);
    // F(78) is the last below 2^53: exact.
    assert_eq!(fib(78.0), 8_944_394_323_791_464.0);
    assert_eq!(fib(1477.0), f64::INFINITY);
    assert!(fib(2.5).is_nan());
}

use super::eval::fib;

#[test]
fn only_the_branch_taken_draws() {
    // A draw in the branch not taken must not move the stream.
    let e = Expr::parse("n > 1 ? randint(0, 9) : 5", &names()).unwrap();
    let mut a = ChaCha8Rng::seed_from_u64(7);
    let b = ChaCha8Rng::seed_from_u64(7);
    assert_eq!(
        e.eval(
            &[1.0, 0.0, 0.0],
            Some(&mut a),
            Grid::Continuous,
            &mut NoHost
        ),
        Ok(5.0)
    );
    assert_eq!(a, b);
    let e = Expr::parse("0 && bernoulli(0.5)", &names()).unwrap();
    e.eval(
        &[1.0, 0.0, 0.0],
        Some(&mut a),
        Grid::Continuous,
        &mut NoHost,
    )
    .unwrap();
    assert_eq!(a, b);
}

#[test]
fn randint_draws_as_the_built_in_windows_draw() {
    // 802.3's r uniform on 0..2^k - 1, drawn as `random_range(0..(1 << k))`.
    let e = Expr::parse("randint(0, pow(2, min(n, 10)) - 1)", &names()).unwrap();
    let mut a = ChaCha8Rng::seed_from_u64(3);
    let mut b = ChaCha8Rng::seed_from_u64(3);
    for n in 1..=16u32 {
        for _ in 0..100 {
            let got = e
                .eval(
                    &[n as f64, 0.0, 0.0],
                    Some(&mut a),
                    Grid::Continuous,
                    &mut NoHost,
                )
                .unwrap();
            let k = n.min(10);
            let want = b.random_range(0..(1u64 << k));
            assert_eq!(got, want as f64);
        }
    }
}

#[test]
fn uniform_on_a_grid_draws_whole_steps_as_the_built_ins() {
    let e = Expr::parse("uniform(0, min(10, 0.1 * pow(2, n - 1)))", &names()).unwrap();
    let mut a = ChaCha8Rng::seed_from_u64(5);
    let mut b = ChaCha8Rng::seed_from_u64(5);
    for n in 1..=10u32 {
        let got = e
            .eval(
                &[n as f64, 0.0, 0.0],
                Some(&mut a),
                Grid::Steps(1e12),
                &mut NoHost,
            )
            .unwrap();
        let hi = (100_000_000_000u64 << (n - 1)).min(10_000_000_000_000);
        let want = b.random_range(0..=hi);
        assert_eq!((got * 1e12).round() as u64, want);
    }
}

#[test]
fn draws_are_in_range_and_reproducible() {
    let e = Expr::parse(
        "randint(-3, 3) + 10 * bernoulli(0.25) + 100 * geometric(0.5)",
        &names(),
    )
    .unwrap();
    let run = |seed| {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        (0..2000)
            .map(|_| {
                e.eval(&[0.0; 3], Some(&mut rng), Grid::Continuous, &mut NoHost)
                    .unwrap()
            })
            .collect::<Vec<_>>()
    };
    let a = run(9);
    assert_eq!(a, run(9));
    assert!(a.iter().all(|v| v.fract() == 0.0 && *v >= -3.0));
    let b = Expr::parse("bernoulli(0.25)", &names()).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let ones = (0..2000)
        .map(|_| {
            b.eval(&[0.0; 3], Some(&mut rng), Grid::Continuous, &mut NoHost)
                .unwrap()
        })
        .sum::<f64>()
        / 2000.0;
    // bernoulli(0.25): 2000 draws, sd = sqrt(0.25 * 0.75 / 2000) = 0.0097; 5 sd.
    assert!((ones - 0.25).abs() < 0.05, "{ones}");
}

#[test]
fn syntax_errors_point_at_the_column() {
    let e = err("randint(0, pow(2, n) - 1");
    assert_eq!(e.column, 25);
    assert!(e.message.contains("expected `)`"), "{}", e.message);
    let e = err("1 + * 2");
    assert_eq!(e.column, 5);
    let e = err("2 $ 3");
    assert_eq!(
        (e.column, e.message.as_str()),
        (3, "`$` is not part of the language")
    );
    let shown = err("n +").to_string();
    assert!(shown.contains("column 4"), "{shown}");
    assert!(shown.ends_with("    n +\n       ^"), "{shown:?}");
    assert!(err("x = 2").message.contains("compare with `==`"));
    assert!(err("10ms * n").message.contains("no unit"));
    assert!(err("").message.contains("empty"));
    assert!(err("a & b").message.contains("`&&`"));
}

#[test]
fn unknown_names_suggest_the_nearest() {
    let e = err("randint(0, nn)");
    assert_eq!(e.column, 12);
    assert_eq!(e.message, "unknown name `nn`; did you mean `n`?");
    assert_eq!(
        err("rand_int(0, 1)").message,
        "unknown function `rand_int`; did you mean `randint`?"
    );
    assert_eq!(
        err("prv * 2").message,
        "unknown name `prv`; did you mean `prev`?"
    );
    assert!(err("zzzzzz")
        .message
        .contains("the names here are n, prev, x"));
    assert!(err("min(1)").message.contains("2 or more"));
    assert!(err("pow(1)")
        .message
        .contains("pow(a, b) takes 2 arguments, not 1"));
    assert!(err("min").message.contains("is a function"));
}

#[test]
fn exact_contexts_refuse_draws() {
    let e = Expr::parse("uniform(0, x)", &Names::exact(&["x"])).unwrap_err();
    assert!(e.message.contains("draws at random"), "{}", e.message);
}

#[test]
fn sizes_are_bounded_when_read() {
    let deep = format!("{}1{}", "(".repeat(200), ")".repeat(200));
    assert!(err(&deep).message.contains("nested more than"));
    let long = vec!["n"; 3000].join(" + ");
    assert!(err(&long).message.contains("operations"));
    let wide = format!("min({})", vec!["1"; 100].join(", "));
    assert!(err(&wide).message.contains("values at once"));
}

#[test]
fn domain_errors_at_evaluation() {
    let e = Expr::parse("randint(0, n)", &names()).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let got = e.eval(
        &[-1.0, 0., 0.],
        Some(&mut rng),
        Grid::Continuous,
        &mut NoHost,
    );
    assert!(got.unwrap_err().0.contains("first end is above"));
    let got = e.eval(
        &[2.5, 0., 0.],
        Some(&mut rng),
        Grid::Continuous,
        &mut NoHost,
    );
    assert!(got.unwrap_err().0.contains("whole numbers"));
    let e = Expr::parse("bernoulli(n)", &names()).unwrap();
    let got = e.eval(
        &[2.0, 0., 0.],
        Some(&mut rng),
        Grid::Continuous,
        &mut NoHost,
    );
    assert!(got.unwrap_err().0.contains("between 0 and 1"));
}

#[test]
fn statements_update_state_in_order() {
    let ns = names();
    let locals = Statements::declared("w = 2; c = 0", &ns).unwrap();
    assert_eq!(locals, ["w", "c"]);
    let init = Statements::parse("w = 2; c = 0", &ns, &locals).unwrap();
    let fail = Statements::parse("w = min(1024, ceil(w * 1.5)); c = c + 1;", &ns, &locals).unwrap();
    let mut vars = [0.0; 5];
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    init.run(&mut vars, Some(&mut rng), Grid::Continuous, &mut NoHost)
        .unwrap();
    for _ in 0..4 {
        fail.run(&mut vars, Some(&mut rng), Grid::Continuous, &mut NoHost)
            .unwrap();
    }
    assert_eq!(&vars[3..], &[12.0, 4.0]);
    let e = Statements::parse("ww = 1", &ns, &locals).unwrap_err();
    assert_eq!(e.message, "`ww` is not a state variable; did you mean `w`?");
    let e = Statements::declared("n = 1", &ns).unwrap_err();
    assert!(e.message.contains("cannot be assigned"));
    let e = Statements::parse("w = 1 w = 2", &ns, &locals).unwrap_err();
    assert_eq!(e.column, 7);
}

struct Events;
impl Host for Events {
    fn call(&mut self, id: usize, numbers: &[f64], texts: &[Box<str>]) -> Result<f64, EvalError> {
        assert_eq!(id, 0);
        Ok(match &*texts[0] {
            "tx-start" => 10.0 * numbers[0] + numbers[1],
            other => return Err(EvalError(format!("no event {other}"))),
        })
    }
}

#[test]
fn host_functions_take_texts_and_numbers() {
    const F: &[HostFn] = &[HostFn {
        name: "event_time",
        params: &[Param::Text, Param::Number, Param::Number],
        signature: "event_time(event, station, nth)",
    }];
    let ns = Names {
        vars: &["slot_us"],
        funcs: F,
        random: false,
    };
    let e = Expr::parse("event_time(\"tx-start\", 1, 2) + slot_us", &ns).unwrap();
    assert_eq!(e.value_with(&[51.2], &mut Events), Ok(12.0 + 51.2));
    let e = Expr::parse("event_time('jam', 1, 2)", &ns).unwrap();
    assert!(e.value_with(&[0.0], &mut Events).is_err());
    let bad = Expr::parse("event_time(1, 1, 2)", &ns).unwrap_err();
    assert!(bad.message.contains("in quotes"), "{}", bad.message);
    let bad = Expr::parse("event_tim(\"a\", 1, 2)", &ns).unwrap_err();
    assert!(
        bad.message.contains("did you mean `event_time`"),
        "{}",
        bad.message
    );
    let bad = Expr::parse("\"a\" + 1", &ns).unwrap_err();
    assert_eq!(bad.column, 1);
}

#[test]
fn host_functions_overload_by_arity_and_show_their_texts() {
    const F: &[HostFn] = &[
        HostFn {
            name: "metric",
            params: &[Param::Text],
            signature: "metric(name)",
        },
        HostFn {
            name: "metric",
            params: &[Param::Text, Param::Number],
            signature: "metric(name, group)",
        },
    ];
    let ns = Names {
        vars: &[],
        funcs: F,
        random: false,
    };
    struct M;
    impl Host for M {
        fn call(&mut self, id: usize, n: &[f64], t: &[Box<str>]) -> Result<f64, EvalError> {
            Ok(match id {
                0 => t[0].len() as f64,
                _ => 100.0 + n[0],
            })
        }
    }
    let e = Expr::parse("metric('abc') + metric('x', 7)", &ns).unwrap();
    assert_eq!(e.value_with(&[], &mut M), Ok(3.0 + 107.0));
    assert_eq!(e.host_calls(&ns), vec![(0, vec!["abc"]), (1, vec!["x"])]);
    let bad = Expr::parse("metric('a', 1, 2)", &ns).unwrap_err();
    assert!(
        bad.message.contains("metric(name) takes 1 argument, not 3"),
        "{}",
        bad.message
    );
}
