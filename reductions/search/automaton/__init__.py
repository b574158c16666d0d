"""Models as finite automata: extraction, minimal DFA, languages at every length, monoids."""
