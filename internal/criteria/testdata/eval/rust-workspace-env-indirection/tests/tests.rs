#[test]
fn binary_name() {
    assert_eq!("rg".len(), 2);
}
