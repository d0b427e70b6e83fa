fn main() -> std::process::ExitCode {
    acp_conductor::cli::main()
}
