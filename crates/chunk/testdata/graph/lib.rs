use crate::store::Store;
use std::collections::HashMap as Map;
mod walk;
use super::util::*;

pub struct Index;

pub fn build() -> Index {
    let s = Store::open("x");
    helper(&s);
    s.flush();
    println!("{}", 1);
    Index
}

impl std::fmt::Display for Index {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        Ok(())
    }
}
