"""numpile-onnx: the exporter "onnx" (numpile.export to ONNX models) and the backend "onnxrt"
(graphs run in onnxruntime). See plugin.py for what numpile loads."""
