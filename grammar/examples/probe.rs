fn main() {
    let text = std::env::args().nth(1).unwrap();
    match grammar::parse(&text) {
        Ok(s) => println!("{s:#?}"),
        Err(e) => println!("{}", e.render("in")),
    }
}
