"""The judge card: a judge run's agreement with the human gold labels per benchmark, kind and
rubric item, each figure with its interval and the labels behind it (pure; no SQL).

:mod:`reviewer.judge_card.stats` computes one row, :mod:`reviewer.judge_card.build` groups the
labels into the card's rows and orders the items worst first, :mod:`reviewer.judge_card.text`
writes it as JSON data or Markdown."""
