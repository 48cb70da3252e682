"""The regex layer (rtcompile/regex/): parsing, translation to stdlib `re`, analyses; each against `regex` itself."""
