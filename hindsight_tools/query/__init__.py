"""Reading a text for what recall and retain need: time expressions and entities."""
