use clap::Args;

#[derive(Args, Debug)]
pub struct ProxyArgs {
    #[command(flatten)]
    pub spec: crate::args::SpecArgs,
}

pub async fn run(_args: ProxyArgs) -> anyhow::Result<std::process::ExitCode> {
    anyhow::bail!("not yet")
}
