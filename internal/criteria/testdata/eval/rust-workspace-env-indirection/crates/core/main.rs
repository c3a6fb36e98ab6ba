fn main() {
    println!("rg");
}
