//! The tantivy adapter over the code-aware tokenizer of `patina_core::tokens`.

use tantivy::tokenizer::{Token, TokenStream, Tokenizer};

use patina_core::tokens::for_each_token;

/// The tantivy tokenizer registered as `code` for the lexical index.
#[derive(Clone, Default)]
pub struct CodeTokenizer {
    tokens: Vec<Token>,
}

pub struct CodeTokenStream<'a> {
    tokens: &'a mut Vec<Token>,
    index: usize,
}

impl Tokenizer for CodeTokenizer {
    type TokenStream<'a> = CodeTokenStream<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> CodeTokenStream<'a> {
        self.tokens.clear();
        let mut position = 0;
        for_each_token(text, |from, to, tok| {
            self.tokens.push(Token {
                offset_from: from,
                offset_to: to,
                position,
                text: tok.to_string(),
                position_length: 1,
            });
            position += 1;
        });
        CodeTokenStream {
            tokens: &mut self.tokens,
            index: 0,
        }
    }
}

impl TokenStream for CodeTokenStream<'_> {
    fn advance(&mut self) -> bool {
        if self.index < self.tokens.len() {
            self.index += 1;
            true
        } else {
            false
        }
    }

    fn token(&self) -> &Token {
        &self.tokens[self.index - 1]
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.tokens[self.index - 1]
    }
}
