"""Text normalisation and metrics of OCR pages, and the reports built from them."""
