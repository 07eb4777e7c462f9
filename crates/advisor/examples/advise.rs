//! Prints the advisor's text report for the files named on the command line
//! (a development aid; `rowtree advise` is the real command).
fn main() {
    let sources: Vec<rowtree_advisor::Source> = std::env::args()
        .skip(1)
        .map(|p| rowtree_advisor::Source {
            text: std::fs::read_to_string(&p).expect("readable file"),
            name: p,
        })
        .collect();
    let report = rowtree_advisor::advise(&sources, &rowtree_advisor::Config::default());
    print!("{}", rowtree_advisor::to_text(&report, false));
}
