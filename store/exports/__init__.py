"""Ground truth out: verdict, score and expansion exports, the gold labels table, and the
Hugging Face dataset folder.
"""
