#[cfg(test)]
mod tests {
    #[test]
    fn smoke() {
        assert!(true);
    }
}
