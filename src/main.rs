fn main() -> std::process::ExitCode {
    csmacd::cli::run()
}
