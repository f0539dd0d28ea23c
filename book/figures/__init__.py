"""The book's pictures, one module per subject; every function returns a matplotlib Figure.

A page imports the module it draws from (`import figures.two_passes`) and calls it by its full
name (`figures.two_passes.two_passes(20, 8)`), so the code that draws a picture is one look away.
The pages run with book/ as their working directory, which puts this package on the path.

* `base`: the colours, sizes and cell helpers the others draw with, and the pictures several
  chapters share: lanes and masks, 2-D tiles, row programs, dot tiles, error maps, bars, a
  race between two programs, accumulation schemes, benchmark charts. Importing it makes the
  page's figures SVG.
* `tiles_and_strides`: part 1's outer sum z[i, j] = x[j] + y[i] over a grid of tiles, and a
  strided view beside memory in address order.
* `column_sums`: programs adding shares into one result: the broadcast's backward (each row's
  program adds into every dx) and a column sum over blocks of rows.
* `two_passes`: one program's two passes over its row (the mean, then the variance).
* `matmul_tiles`: which tiles a program reads: y = A x by row blocks, y = x Wᵀ + b, and dW = dYᵀ X.
* `atomic_adds`: where programs add when the address is data (a histogram, an embedding's
  backward), and dW split over M: several programs adding into one tile.
* `shared_gradients`: one program per row adding its share into the parameter gradients
  every row shares, and the sweeps one program makes over its row.
* `attention_tiles`: which blocks of the attention score matrix each program computes, forward
  and backward, causal or not.
"""
