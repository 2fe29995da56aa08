"""placeholder"""
import numpile
class OnnxExporter(numpile.Exporter):
    name = "onnx"
