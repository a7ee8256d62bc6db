"""Loading of annotation boxes and predicted words, and the page geometry that matches them."""
