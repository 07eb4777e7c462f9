//! Prints the advisor's text report for the files named on the command line
//! (a development aid; `rowtree advise` is the real command). A first
//! argument `--postgresql` reads them as PostgreSQL-dialect DDL.
fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut config = rowtree_advisor::Config::default();
    if args.first().is_some_and(|a| a == "--postgresql") {
        args.remove(0);
        config = config.with_dialect(rowtree_advisor::Dialect::PostgreSql);
    }
    let sources: Vec<rowtree_advisor::Source> = args
        .into_iter()
        .map(|p| rowtree_advisor::Source {
            text: std::fs::read_to_string(&p).expect("readable file"),
            name: p,
        })
        .collect();
    let report = rowtree_advisor::advise(&sources, &config);
    print!("{}", rowtree_advisor::to_text(&report, false));
}
