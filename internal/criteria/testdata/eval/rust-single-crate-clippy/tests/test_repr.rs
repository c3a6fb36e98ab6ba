use anyhow::Error;

#[test]
fn test_msg() {
    assert_eq!(Error::msg("oh no!").message(), "oh no!");
}
